#include "io/xdp_program.hh"

#include <arpa/inet.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "transport/segment.hh"
#include "xcp/header.hh"

namespace xcphost {
namespace {

// Frame offsets (Ethernet, IPv4 without options, then the shim).
constexpr int16_t kEthType = 12;
constexpr int16_t kIp = 14;
constexpr int16_t kShim = kIp + 20;
// Bytes the program reads before it knows hdr_len: the shim's first word.
constexpr int32_t kFixedBytes = kShim + 4;

// A tiny assembler: instructions plus forward jumps to one label ("pass").
class Asm {
 public:
  void ins(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
    bpf_insn i{};
    i.code = code;
    i.dst_reg = dst & 0xf;
    i.src_reg = src & 0xf;
    i.off = off;
    i.imm = imm;
    p_.push_back(i);
  }
  void mov_reg(uint8_t dst, uint8_t src) { ins(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0); }
  void mov_imm(uint8_t dst, int32_t imm) { ins(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm); }
  void alu_imm(uint8_t op, uint8_t dst, int32_t imm) { ins(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm); }
  void alu_reg(uint8_t op, uint8_t dst, uint8_t src) { ins(BPF_ALU64 | op | BPF_X, dst, src, 0, 0); }
  void load(uint8_t size, uint8_t dst, uint8_t src, int16_t off) { ins(BPF_LDX | size | BPF_MEM, dst, src, off, 0); }
  void store_imm(uint8_t size, uint8_t dst, int16_t off, int32_t imm) {
    ins(BPF_ST | size | BPF_MEM, dst, 0, off, imm);
  }
  void load_map_fd(uint8_t dst, int fd) {
    ins(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd);
    ins(0, 0, 0, 0, 0);
  }
  void call(int32_t helper) { ins(BPF_JMP | BPF_CALL, 0, 0, 0, helper); }
  void exit() { ins(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }
  // if (dst OP imm) goto pass; `jmp32` compares the low 32 bits.
  void to_pass_imm(uint8_t op, uint8_t dst, int32_t imm, bool jmp32 = false) {
    passes_.push_back(p_.size());
    ins(static_cast<uint8_t>((jmp32 ? BPF_JMP32 : BPF_JMP) | op | BPF_K), dst, 0, 0, imm);
  }
  void to_pass_reg(uint8_t op, uint8_t dst, uint8_t src) {
    passes_.push_back(p_.size());
    ins(BPF_JMP | op | BPF_X, dst, src, 0, 0);
  }
  // Places the label: r0 = XDP_PASS; exit. Patches every jump to it.
  std::vector<bpf_insn> finish_with_pass() {
    const size_t label = p_.size();
    mov_imm(BPF_REG_0, XDP_PASS);
    exit();
    for (size_t at : passes_) p_[at].off = static_cast<int16_t>(label - at - 1);
    return p_;
  }

 private:
  std::vector<bpf_insn> p_;
  std::vector<size_t> passes_;
};

// A u16/u32 of the frame as a little-endian load of its network-order bytes reads.
int32_t as_loaded16(uint16_t host_value) { return static_cast<int32_t>(htons(host_value)); }

}  // namespace

std::vector<bpf_insn> xdp_filter_program(const XdpFilterSpec& spec) {
  if (spec.xsk_map_fd < 0 || spec.port_map_fd < 0) throw std::invalid_argument("xdp program: map fds not set");
  if (spec.max_frame_bytes < static_cast<uint32_t>(kFixedBytes)) throw std::invalid_argument("xdp program: max_frame_bytes too small");
  constexpr uint8_t r0 = BPF_REG_0, r1 = BPF_REG_1, r2 = BPF_REG_2, r3 = BPF_REG_3, r4 = BPF_REG_4, r5 = BPF_REG_5,
                    r6 = BPF_REG_6, r7 = BPF_REG_7, r8 = BPF_REG_8, r10 = BPF_REG_10;
  Asm a;
  a.mov_reg(r6, r1);                                           // r6 = ctx
  a.load(BPF_W, r2, r1, offsetof(xdp_md, data));               // r2 = data
  a.load(BPF_W, r3, r1, offsetof(xdp_md, data_end));           // r3 = data_end
  a.mov_reg(r4, r2);
  a.alu_imm(BPF_ADD, r4, kFixedBytes);
  a.to_pass_reg(BPF_JGT, r4, r3);                              // shorter than the fixed part
  a.mov_reg(r4, r2);
  a.alu_imm(BPF_ADD, r4, static_cast<int32_t>(spec.max_frame_bytes));
  a.to_pass_reg(BPF_JLT, r4, r3);                              // longer than a UMEM frame holds
  a.load(BPF_H, r5, r2, kEthType);
  a.to_pass_imm(BPF_JNE, r5, as_loaded16(0x0800));             // not IPv4
  a.load(BPF_B, r5, r2, kIp);
  a.to_pass_imm(BPF_JNE, r5, 0x45);                            // IPv4 with options
  a.load(BPF_B, r5, r2, kIp + 9);
  a.to_pass_imm(BPF_JNE, r5, xcp::kIpProtoXcp);
  a.load(BPF_H, r5, r2, kIp + 6);
  a.alu_imm(BPF_AND, r5, as_loaded16(0x3fff));                 // MF or a fragment offset
  a.to_pass_imm(BPF_JNE, r5, 0);
  if (spec.local_addr != 0) {
    a.load(BPF_W, r5, r2, kIp + 16);
    a.to_pass_imm(BPF_JNE, r5, static_cast<int32_t>(htonl(spec.local_addr)), true);
  }
  a.load(BPF_B, r5, r2, kShim + xcp::kOffsetNextProtocol);
  a.to_pass_imm(BPF_JNE, r5, kNextProtoTransport);
  a.load(BPF_B, r5, r2, kShim + xcp::kOffsetVersionFormat);
  a.mov_reg(r7, r5);
  a.alu_imm(BPF_AND, r7, 0x0f);
  a.to_pass_imm(BPF_JEQ, r7, static_cast<int32_t>(xcp::Format::kControl));
  a.alu_imm(BPF_RSH, r5, 4);
  a.to_pass_imm(BPF_JNE, r5, xcp::kXcpVersion);
  // r4 = data + hdr_len; the destination port is at r4 + kShim + 2.
  a.load(BPF_B, r5, r2, kShim + xcp::kOffsetHdrLen);
  a.mov_reg(r4, r2);
  a.alu_reg(BPF_ADD, r4, r5);
  a.mov_reg(r7, r4);
  a.alu_imm(BPF_ADD, r7, kShim + static_cast<int32_t>(kSegmentDstPortOffset) + 2);
  a.to_pass_reg(BPF_JGT, r7, r3);
  a.load(BPF_H, r8, r4, static_cast<int16_t>(kShim + kSegmentDstPortOffset));
  a.ins(BPF_ALU | BPF_END | BPF_TO_BE, r8, 0, 0, 16);          // to host order
  a.alu_imm(BPF_AND, r8, 0xffff);                               // (bounds for the verifier)
  // r0 = the bitmap (key 0 on the stack).
  a.store_imm(BPF_W, r10, -4, 0);
  a.load_map_fd(r1, spec.port_map_fd);
  a.mov_reg(r2, r10);
  a.alu_imm(BPF_ADD, r2, -4);
  a.call(BPF_FUNC_map_lookup_elem);
  a.to_pass_imm(BPF_JEQ, r0, 0);
  a.mov_reg(r1, r8);
  a.alu_imm(BPF_RSH, r1, 3);
  a.alu_reg(BPF_ADD, r0, r1);
  a.load(BPF_B, r1, r0, 0);
  a.mov_reg(r2, r8);
  a.alu_imm(BPF_AND, r2, 7);
  a.alu_reg(BPF_RSH, r1, r2);
  a.alu_imm(BPF_AND, r1, 1);
  a.to_pass_imm(BPF_JEQ, r1, 0);                               // not one of our ports
  // return bpf_redirect_map(&xsks, ctx->rx_queue_index, no_socket_action)
  a.load(BPF_W, r2, r6, offsetof(xdp_md, rx_queue_index));
  a.load_map_fd(r1, spec.xsk_map_fd);
  a.mov_imm(r3, static_cast<int32_t>(spec.no_socket_action));
  a.call(BPF_FUNC_redirect_map);
  a.exit();
  return a.finish_with_pass();
}

std::vector<uint8_t> port_bitmap(std::span<const PortRange> ranges) {
  std::vector<uint8_t> bits(kPortBitmapBytes, ranges.empty() ? 0xff : 0);
  for (const auto& r : ranges) {
    if (r.first > r.last) throw std::invalid_argument("port bitmap: a range has first > last");
    for (uint32_t p = r.first; p <= r.last; ++p) bits[p >> 3] = static_cast<uint8_t>(bits[p >> 3] | (1u << (p & 7)));
  }
  return bits;
}

namespace {
long bpf(int cmd, bpf_attr& attr) { return syscall(SYS_bpf, cmd, &attr, sizeof attr); }
uint64_t ptr(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }
}  // namespace

xcp::FileDescriptor bpf_map_create(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
                                   const char* name) {
  bpf_attr attr{};
  attr.map_type = type;
  attr.key_size = key_size;
  attr.value_size = value_size;
  attr.max_entries = max_entries;
  std::strncpy(attr.map_name, name, sizeof attr.map_name - 1);
  return xcp::FileDescriptor(
      static_cast<int>(xcp::check_syscall(std::string("bpf(BPF_MAP_CREATE) ") + name, bpf(BPF_MAP_CREATE, attr))));
}

void bpf_map_update(int map_fd, uint32_t key, const void* value) {
  bpf_attr attr{};
  attr.map_fd = static_cast<uint32_t>(map_fd);
  attr.key = ptr(&key);
  attr.value = ptr(value);
  attr.flags = BPF_ANY;
  xcp::check_syscall("bpf(BPF_MAP_UPDATE_ELEM)", bpf(BPF_MAP_UPDATE_ELEM, attr));
}

xcp::FileDescriptor bpf_load_xdp(std::span<const bpf_insn> insns) {
  static const char kLicense[] = "GPL";
  std::vector<char> log(64 * 1024);
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_XDP;
  attr.insns = ptr(insns.data());
  attr.insn_cnt = static_cast<uint32_t>(insns.size());
  attr.license = ptr(kLicense);
  attr.log_buf = ptr(log.data());
  attr.log_size = static_cast<uint32_t>(log.size());
  attr.log_level = 1;
  std::strncpy(attr.prog_name, "xcpperf_xsk", sizeof attr.prog_name - 1);
  const long fd = bpf(BPF_PROG_LOAD, attr);
  if (fd < 0) {
    const int err = errno;
    std::string verifier(log.data());
    if (verifier.size() > 2000) verifier = "..." + verifier.substr(verifier.size() - 2000);
    throw xcp::SystemError("bpf(BPF_PROG_LOAD) of the XDP filter" + (verifier.empty() ? "" : ": " + verifier), err);
  }
  return xcp::FileDescriptor(static_cast<int>(fd));
}

xcp::FileDescriptor bpf_xdp_link(int prog_fd, int ifindex, uint32_t xdp_flags) {
  bpf_attr attr{};
  attr.link_create.prog_fd = static_cast<uint32_t>(prog_fd);
  attr.link_create.target_ifindex = static_cast<uint32_t>(ifindex);
  attr.link_create.attach_type = BPF_XDP;
  attr.link_create.flags = xdp_flags;
  return xcp::FileDescriptor(static_cast<int>(xcp::check_syscall("bpf(BPF_LINK_CREATE) XDP", bpf(BPF_LINK_CREATE, attr))));
}

uint32_t bpf_xdp_test_run(int prog_fd, std::span<const uint8_t> frame) {
  bpf_attr attr{};
  attr.test.prog_fd = static_cast<uint32_t>(prog_fd);
  attr.test.data_in = ptr(frame.data());
  attr.test.data_size_in = static_cast<uint32_t>(frame.size());
  attr.test.repeat = 1;
  xcp::check_syscall("bpf(BPF_PROG_TEST_RUN)", bpf(BPF_PROG_TEST_RUN, attr));
  return attr.test.retval;
}

}  // namespace xcphost
