"""The XCP wire format on the Python side: shim decoder/encoder and pcap reading."""
