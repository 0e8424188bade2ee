-- Wireshark / tshark dissector for xcplab's XCP packets (docs/captures.md).
--
--   tshark -X lua_script:tools/wireshark/xcp.lua -r run.pcapng -Y 'xcp.h_feedback < 0'
--   wireshark -X lua_script:tools/wireshark/xcp.lua run.pcapng
--   (or copy this file to ~/.local/lib/wireshark/plugins/)
--
-- Three protocols, each registered where the project carries it:
--   xcp     the XCP shim, IPv4 protocol 253 (libxcp/include/xcp/header.hh):
--             word 0 : next_protocol(8) | hdr_len(8) | version(4)=4 | format(4) | flags(8)
--             word 1..4 : H_cwnd u32 B, H_rtt u32 us, H_feedback i32 B, H_reverse_feedback i32 B
--             [flag I] xcp_ttl(8) | reserved(24) ; last_xcp_router IPv4
--             [flag B] bottleneck_id(32) ; next_bottleneck_id(32)
--   xcpctl  the XCP-i control body after a Format 3 shim whose next_protocol is 0xFD
--           (libxcp/include/xcp/control_message.hh)
--   xcpseg  the userspace transport segment after a shim whose next_protocol is 254
--           (host-image/src/transport/segment.hh)
--
-- The constants below are the ones of those headers; tests/wireshark/ reads the C++
-- headers and fails when a number here differs, and decodes every packet of
-- libxcp/testvectors/*.json with tshark and compares each field with the vector's.
-- The validity rules are parse_header's and parse_control's: `xcp.status` and
-- `xcpctl.status` say what the engine and the hosts would decide for the packet.

local C = {
  -- header.hh
  kIpProtoXcp = 253, kXcpVersion = 4,
  kHeaderBaseLen = 20, kXcpiBlockLen = 8, kIxcpBlockLen = 8,
  kFormatStandard = 1, kFormatMinimal = 2, kFormatControl = 3,
  kFlagXcpi = 0x01, kFlagIxcp = 0x02, kFlagLossFallback = 0x04, kFlagAppLimited = 0x08,
  kFlagsAllKnown = 0x0F,
  -- control_message.hh
  kNextProtoControl = 0xFD, kControlBodyVersion = 1, kControlBodyLen = 24,
  kControlRequest = 1, kControlAck = 2, kControlProbe = 3,
  -- segment.hh
  kNextProtoTransport = 254, kSegmentBaseLen = 36, kSackBlockLen = 16, kMaxSackBlocks = 4,
  kSegSyn = 0x01, kSegAck = 0x02, kSegFin = 0x04, kSegRst = 0x08, kSegAllKnown = 0x0F,
  kSackPermitted = 0x0001,
}

local formats = { [1] = "Standard", [2] = "Minimal", [3] = "Control" }
local ctl_types = { [1] = "REQUEST", [2] = "ACK", [3] = "PROBE" }

-- ---------------------------------------------------------------- xcp (shim)
local xcp = Proto("xcp", "XCP shim (xcplab)")
local F = {
  next_protocol = ProtoField.uint8("xcp.next_protocol", "Next protocol", base.DEC),
  hdr_len = ProtoField.uint8("xcp.hdr_len", "Header length", base.DEC),
  version = ProtoField.uint8("xcp.version", "Version", base.DEC, nil, 0xF0),
  format = ProtoField.uint8("xcp.format", "Format", base.DEC, formats, 0x0F),
  flags = ProtoField.uint8("xcp.flags", "Flags", base.HEX),
  flag_i = ProtoField.bool("xcp.flags.xcpi", "I: XCP-i block", 8, nil, C.kFlagXcpi),
  flag_b = ProtoField.bool("xcp.flags.ixcp", "B: iXCP block", 8, nil, C.kFlagIxcp),
  flag_l = ProtoField.bool("xcp.flags.loss_fallback", "L: loss fallback", 8, nil,
                           C.kFlagLossFallback),
  flag_a = ProtoField.bool("xcp.flags.app_limited", "A: application limited", 8, nil,
                           C.kFlagAppLimited),
  h_cwnd = ProtoField.uint32("xcp.h_cwnd", "H_cwnd (bytes)", base.DEC),
  h_rtt = ProtoField.uint32("xcp.h_rtt", "H_rtt (us)", base.DEC),
  h_feedback = ProtoField.int32("xcp.h_feedback", "H_feedback (bytes)", base.DEC),
  reverse_feedback = ProtoField.int32("xcp.reverse_feedback", "H_reverse_feedback (bytes)",
                                      base.DEC),
  xcp_ttl = ProtoField.uint8("xcp.xcp_ttl", "xcp_ttl", base.DEC),
  xcpi_reserved = ProtoField.uint24("xcp.xcpi_reserved", "Reserved", base.HEX),
  last_xcp_router = ProtoField.ipv4("xcp.last_xcp_router", "last_xcp_router"),
  bottleneck_id = ProtoField.uint32("xcp.bottleneck_id", "bottleneck_id", base.HEX_DEC),
  next_bottleneck_id = ProtoField.uint32("xcp.next_bottleneck_id", "next_bottleneck_id",
                                         base.HEX_DEC),
  status = ProtoField.string("xcp.status", "Status (ok | not_xcp | malformed)"),
}
xcp.fields = F
local E = {
  not_xcp = ProtoExpert.new("xcp.not_xcp", "Version is not 4: not XCP, forwarded untouched",
                            expert.group.PROTOCOL, expert.severity.NOTE),
  malformed = ProtoExpert.new("xcp.malformed", "Malformed XCP shim: forwarded as non-XCP",
                              expert.group.MALFORMED, expert.severity.ERROR),
}
xcp.experts = E

-- ---------------------------------------------------------------- xcpctl
local xcpctl = Proto("xcpctl", "XCP-i control message (xcplab)")
local FC = {
  type = ProtoField.uint8("xcpctl.type", "Type", base.DEC, ctl_types),
  body_version = ProtoField.uint8("xcpctl.body_version", "Body version", base.DEC),
  reserved = ProtoField.uint16("xcpctl.reserved", "Reserved", base.HEX),
  session = ProtoField.uint32("xcpctl.session", "Session", base.DEC),
  seq = ProtoField.uint32("xcpctl.seq", "Seq (attempt / chirp number)", base.DEC),
  aux = ProtoField.uint32("xcpctl.aux", "Aux", base.DEC),
  probe_index = ProtoField.uint16("xcpctl.probe_index", "Probe index in chirp", base.DEC),
  probe_count = ProtoField.uint16("xcpctl.probe_count", "Probes in chirp", base.DEC),
  value = ProtoField.uint64("xcpctl.value", "Value (probe send offset, ns)", base.DEC),
  padding = ProtoField.bytes("xcpctl.padding", "Padding"),
  status = ProtoField.string("xcpctl.status", "Status (ok | invalid)"),
}
xcpctl.fields = FC
local EC = {
  invalid = ProtoExpert.new("xcpctl.invalid", "Invalid XCP-i control message",
                            expert.group.MALFORMED, expert.severity.ERROR),
}
xcpctl.experts = EC

-- ---------------------------------------------------------------- xcpseg
local xcpseg = Proto("xcpseg", "xcplab transport segment")
local seg_flag_names = { { C.kSegSyn, "SYN" }, { C.kSegAck, "ACK" }, { C.kSegFin, "FIN" },
                         { C.kSegRst, "RST" } }
local FS = {
  src_port = ProtoField.uint16("xcpseg.src_port", "Source port", base.DEC),
  dst_port = ProtoField.uint16("xcpseg.dst_port", "Destination port", base.DEC),
  port = ProtoField.uint16("xcpseg.port", "Port (either)", base.DEC),
  seq = ProtoField.uint64("xcpseg.seq", "Seq (byte offset)", base.DEC),
  ack = ProtoField.uint64("xcpseg.ack", "Ack (next byte expected)", base.DEC),
  flags = ProtoField.uint8("xcpseg.flags", "Flags", base.HEX),
  syn = ProtoField.bool("xcpseg.flags.syn", "SYN", 8, nil, C.kSegSyn),
  ackf = ProtoField.bool("xcpseg.flags.ack", "ACK", 8, nil, C.kSegAck),
  fin = ProtoField.bool("xcpseg.flags.fin", "FIN", 8, nil, C.kSegFin),
  rst = ProtoField.bool("xcpseg.flags.rst", "RST", 8, nil, C.kSegRst),
  sack_count = ProtoField.uint8("xcpseg.sack_count", "SACK blocks", base.DEC),
  options = ProtoField.uint16("xcpseg.options", "Options", base.HEX),
  sack_permitted = ProtoField.bool("xcpseg.options.sack_permitted", "SACK permitted", 16, nil,
                                   C.kSackPermitted),
  window = ProtoField.uint32("xcpseg.window", "Window (bytes)", base.DEC),
  ts_val = ProtoField.uint32("xcpseg.ts_val", "ts_val (us)", base.DEC),
  ts_ecr = ProtoField.uint32("xcpseg.ts_ecr", "ts_ecr (us)", base.DEC),
  sack_start = ProtoField.uint64("xcpseg.sack.start", "SACK start", base.DEC),
  sack_end = ProtoField.uint64("xcpseg.sack.end", "SACK end", base.DEC),
  len = ProtoField.uint32("xcpseg.len", "Payload length (bytes, as sent)", base.DEC),
  payload = ProtoField.bytes("xcpseg.payload", "Payload (as captured)"),
}
xcpseg.fields = FS
local ES = {
  invalid = ProtoExpert.new("xcpseg.invalid", "Segment the host stack would reject",
                            expert.group.MALFORMED, expert.severity.ERROR),
}
xcpseg.experts = ES

-- ---------------------------------------------------------------- helpers
local function seg_flag_text(f)
  local out = {}
  for _, nf in ipairs(seg_flag_names) do
    if bit.band(f, nf[1]) ~= 0 then out[#out + 1] = nf[2] end
  end
  return table.concat(out, ",")
end

-- `sent`: the segment's length as sent (IPv4 total length minus headers), which a
-- snap length may have cut in the capture.
local function dissect_segment(tvb, pinfo, tree, sent)
  local n = tvb:len()
  local t = tree:add(xcpseg, tvb(0, math.min(n, C.kSegmentBaseLen)))
  pinfo.cols.protocol = "XCP/SEG"
  if n < C.kSegmentBaseLen then
    t:add_proto_expert_info(ES.invalid, "shorter than the 36-byte base (or cut by snaplen)")
    return n
  end
  local sport, dport = tvb(0, 2):uint(), tvb(2, 2):uint()
  t:add(FS.src_port, tvb(0, 2)); t:add(FS.dst_port, tvb(2, 2))
  t:add(FS.port, tvb(0, 2)):set_hidden(); t:add(FS.port, tvb(2, 2)):set_hidden()
  t:add(FS.seq, tvb(4, 8)); t:add(FS.ack, tvb(12, 8))
  local flags = tvb(20, 1):uint()
  local ft = t:add(FS.flags, tvb(20, 1)):append_text(" (" .. seg_flag_text(flags) .. ")")
  ft:add(FS.syn, tvb(20, 1)); ft:add(FS.ackf, tvb(20, 1))
  ft:add(FS.fin, tvb(20, 1)); ft:add(FS.rst, tvb(20, 1))
  local sacks = tvb(21, 1):uint()
  t:add(FS.sack_count, tvb(21, 1))
  t:add(FS.options, tvb(22, 2)):add(FS.sack_permitted, tvb(22, 2))
  t:add(FS.window, tvb(24, 4)); t:add(FS.ts_val, tvb(28, 4)); t:add(FS.ts_ecr, tvb(32, 4))
  if bit.band(flags, bit.bnot(C.kSegAllKnown)) ~= 0 then
    t:add_proto_expert_info(ES.invalid, "unknown flag bits")
  end
  if sacks > C.kMaxSackBlocks then
    t:add_proto_expert_info(ES.invalid, "more than 4 SACK blocks")
    sacks = 0
  end
  local off = C.kSegmentBaseLen
  for _ = 1, sacks do
    if n < off + C.kSackBlockLen then
      t:add_proto_expert_info(ES.invalid, "SACK block cut short")
      break
    end
    t:add(FS.sack_start, tvb(off, 8)); t:add(FS.sack_end, tvb(off + 8, 8))
    if tvb(off + 8, 8):uint64() <= tvb(off, 8):uint64() then
      t:add_proto_expert_info(ES.invalid, "inverted SACK range")
    end
    off = off + C.kSackBlockLen
  end
  local payload = math.max(0, sent - off)
  t:add(FS.len, payload):set_generated()
  if n > off then t:add(FS.payload, tvb(off)) end
  pinfo.cols.info:append(string.format(" %d > %d [%s] seq=%s ack=%s len=%d", sport, dport,
      seg_flag_text(flags), tostring(tvb(4, 8):uint64()), tostring(tvb(12, 8):uint64()), payload))
  return tvb:len()
end

function xcpseg.dissector(tvb, pinfo, tree)
  return dissect_segment(tvb, pinfo, tree, tvb:reported_length_remaining(0))
end

-- Shim bytes start at 0 of tvb (a valid shim). Returns (valid, why, body): as
-- parse_control decides, and whether the shim is a control shim so a body follows.
local function control_status(tvb, fmt, flags, nxt)
  if fmt ~= C.kFormatControl then return false, "format is not 3", false end
  if flags ~= 0 then return false, "a control shim carries no blocks or flags", false end
  if nxt ~= C.kNextProtoControl then return false, "next_protocol is not 0xFD", false end
  if tvb:len() < C.kHeaderBaseLen + C.kControlBodyLen then return false, "short body", true end
  local b = C.kHeaderBaseLen
  if tvb(b + 1, 1):uint() ~= C.kControlBodyVersion then
    return false, "body version is not 1", true
  end
  if ctl_types[tvb(b, 1):uint()] == nil then return false, "unknown type", true end
  return true, nil, true
end

local function dissect_control(tvb, pinfo, tree, ok, why, body)
  local b = C.kHeaderBaseLen
  local n = tvb:len() - b
  local t = tree:add(xcpctl, tvb(b, math.max(0, math.min(n, C.kControlBodyLen))))
  t:add(FC.status, ok and "ok" or "invalid"):set_generated()
  if not ok then
    t:add_proto_expert_info(EC.invalid, why)
    pinfo.cols.info:append(" [invalid XCP-i control message: " .. why .. "]")
  end
  if not body or n < 4 then return end
  local ty = tvb(b, 1):uint()
  t:add(FC.type, tvb(b, 1)); t:add(FC.body_version, tvb(b + 1, 1))
  t:add(FC.reserved, tvb(b + 2, 2))
  if n >= 8 then t:add(FC.session, tvb(b + 4, 4)) end
  if n >= 12 then t:add(FC.seq, tvb(b + 8, 4)) end
  if n >= 16 then
    local at = t:add(FC.aux, tvb(b + 12, 4))
    if ty == C.kControlProbe then
      at:add(FC.probe_index, tvb(b + 12, 2)); at:add(FC.probe_count, tvb(b + 14, 2))
    end
  end
  if n >= 24 then t:add(FC.value, tvb(b + 16, 8)) end
  if n > C.kControlBodyLen then t:add(FC.padding, tvb(b + C.kControlBodyLen)) end
  pinfo.cols.protocol = "XCP-i"
  if ok then
    pinfo.cols.info = string.format("XCP-i %s session=%d seq=%d aux=%d", ctl_types[ty],
        tvb(b + 4, 4):uint(), tvb(b + 8, 4):uint(), tvb(b + 12, 4):uint())
  end
end

-- The shim's status as parse_header decides it, and the length it claims.
local function shim_status(tvb)
  local n = tvb:len()
  if n < 4 then return "malformed", "fewer than 4 bytes" end
  if bit.rshift(tvb(2, 1):uint(), 4) ~= C.kXcpVersion then return "not_xcp", nil end
  if n < C.kHeaderBaseLen then return "malformed", "shorter than 20 bytes" end
  local fmt, flags = bit.band(tvb(2, 1):uint(), 0x0F), tvb(3, 1):uint()
  if formats[fmt] == nil then return "malformed", "unknown format " .. fmt end
  if bit.band(flags, bit.bnot(C.kFlagsAllKnown)) ~= 0 then
    return "malformed", "unknown flag bits"
  end
  local want = C.kHeaderBaseLen
  if bit.band(flags, C.kFlagXcpi) ~= 0 then want = want + C.kXcpiBlockLen end
  if bit.band(flags, C.kFlagIxcp) ~= 0 then want = want + C.kIxcpBlockLen end
  if tvb(1, 1):uint() ~= want then return "malformed", "hdr_len disagrees with flags" end
  if n < want then return "malformed", "shorter than hdr_len" end
  return "ok", nil
end

local ip_proto_table = DissectorTable.get("ip.proto")
local data_dissector = Dissector.get("data")

function xcp.dissector(tvb, pinfo, tree)
  local n = tvb:len()
  pinfo.cols.protocol = "XCP"
  local status, why = shim_status(tvb)
  local t = tree:add(xcp, tvb(0, math.min(n, math.max(4, status == "ok" and tvb(1, 1):uint() or
                                                        math.min(n, C.kHeaderBaseLen)))))
  t:add(F.status, status):set_generated()
  if status == "malformed" then t:add_proto_expert_info(E.malformed, why) end
  if status == "not_xcp" then t:add_proto_expert_info(E.not_xcp) end
  if n < 4 then
    pinfo.cols.info = "XCP [malformed]"
    return n
  end
  local nxt = tvb(0, 1):uint()
  t:add(F.next_protocol, tvb(0, 1)); t:add(F.hdr_len, tvb(1, 1))
  t:add(F.version, tvb(2, 1)); t:add(F.format, tvb(2, 1))
  local fmt, flags = bit.band(tvb(2, 1):uint(), 0x0F), tvb(3, 1):uint()
  local ft = t:add(F.flags, tvb(3, 1))
  ft:add(F.flag_i, tvb(3, 1)); ft:add(F.flag_b, tvb(3, 1))
  ft:add(F.flag_l, tvb(3, 1)); ft:add(F.flag_a, tvb(3, 1))
  if status == "not_xcp" then
    pinfo.cols.info = "XCP? version " .. bit.rshift(tvb(2, 1):uint(), 4) .. " (not XCP)"
    data_dissector:call(tvb(0):tvb(), pinfo, tree)
    return n
  end
  if status ~= "ok" then
    -- routers forward it as non-XCP: no field a filter on feedback would match
    pinfo.cols.info = "XCP [malformed: " .. why .. "]"
    data_dissector:call(tvb(0):tvb(), pinfo, tree)
    return n
  end
  t:add(F.h_cwnd, tvb(4, 4)); t:add(F.h_rtt, tvb(8, 4))
  t:add(F.h_feedback, tvb(12, 4)); t:add(F.reverse_feedback, tvb(16, 4))
  local off = C.kHeaderBaseLen
  if bit.band(flags, C.kFlagXcpi) ~= 0 then
    t:add(F.xcp_ttl, tvb(off, 1)); t:add(F.xcpi_reserved, tvb(off + 1, 3))
    t:add(F.last_xcp_router, tvb(off + 4, 4))
    off = off + C.kXcpiBlockLen
  end
  if bit.band(flags, C.kFlagIxcp) ~= 0 then
    t:add(F.bottleneck_id, tvb(off, 4)); t:add(F.next_bottleneck_id, tvb(off + 4, 4))
    off = off + C.kIxcpBlockLen
  end
  pinfo.cols.info = string.format("XCP %s cwnd=%d rtt=%dus fb=%d rfb=%d",
      formats[fmt], tvb(4, 4):uint(), tvb(8, 4):uint(), tvb(12, 4):int(), tvb(16, 4):int())
  if nxt == C.kNextProtoControl or fmt == C.kFormatControl then
    -- routers never touch a Format 3 shim; what follows is a control body or nothing valid
    local ok, cwhy, body = control_status(tvb, fmt, flags, nxt)
    dissect_control(tvb, pinfo, tree, ok, cwhy, body)
    return n
  end
  if n > off then
    local rest = tvb(off):tvb()
    if nxt == C.kNextProtoTransport then
      dissect_segment(rest, pinfo, tree, tvb:reported_length_remaining(off))
    elseif not ip_proto_table:try(nxt, rest, pinfo, tree) then
      data_dissector:call(rest, pinfo, tree)
    end
  end
  return n
end

ip_proto_table:add(C.kIpProtoXcp, xcp)

-- For tests/wireshark/: the constants this file uses, to compare with the C++ headers.
XCPLAB_DISSECTOR_CONSTANTS = C
