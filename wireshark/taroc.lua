-- Wireshark dissector for TAROC frames as `taroc eval --write-frames` writes them: the draft's
-- format (schemes taroc, taroc-repair) and taroc-plus's (taroc-plus, taroc-plus-u).
--
-- Encapsulation (LINKTYPE_USER0, 147; see README.md beside this file): every record is
--   [direction, 1 octet: 0 forward, 1 reverse] [frame kind, 1 octet] [frame]
-- with the kind bytes of taroc-core's FrameKind. Kinds 1 and 2 (UNCOMPRESSED_TCP,
-- COMPRESSED_TCP) are the draft's, 8 to 0x7F taroc-plus's, 0 (TYPE_IP) and 6 (CONTEXT_STATE)
-- both's: the preference taroc.profile (auto, draft, plus) says which format to read; auto
-- tells them apart by the kind byte (and a CONTEXT_STATE frame by its type octet).
--
-- The draft's formats (crates/core/src/taroc/format.rs, docs/taroc-interpretations.md):
-- * TYPE_IP: an IP packet, handed to Wireshark's IP dissectors.
-- * UNCOMPRESSED_TCP: an IP/TCP packet whose first length field (IPv4 Total Length, IPv6
--   Payload Length) carries [context flags][CID]; context flags: bit 0 RANDOM IP-ID, bits 1-2
--   the context's usual ECN bits. The length is restored from the frame length and the packet
--   handed to the IP dissector.
-- * COMPRESSED_TCP: CID, flag octet R O I P S A W U, TCP checksum (2), IP-ID (2, only in a
--   context whose UNCOMPRESSED_TCP set RANDOM IP-ID), R-octet (if R), urgent pointer (2, if U),
--   WASI (if W, A, S or I: 2-bit PT, then C_WIN, C_ACK, C_SEQ, C_IP_ID at the PT's lengths, padded
--   to an octet), options octet (if O: 0000 V E SA), TS value and TS echo LSBs in the prefix code
--   0+7 / 10+14 / 110+21 / 1110xxxx+32 bits, SA SACK blocks as (left edge - ACK, size) RFC 1144
--   deltas, then the TCP data.
-- * CONTEXT_STATE: a context request, [0x01][CID]...
--
-- taroc-plus's formats are those of docs/taroc-plus-format.md (section numbers below are its):
-- IR, IR-R, IR-N (plain and replicated), IR-S, compact IR (long, mirrored, with mirror numbers,
-- short form), compact SYN, packed IR, CO-S, CO-I, CO-N, tunnel frames, CO frames (CID 0, CID octet, CID prefix,
-- short code) and the feedback frames. A CO frame's bit field depends on its context (timestamps, strides, IP-ID
-- behaviour, an IPv4 outer header): the dissector keeps each context as the frames that set it up
-- (IR frames of every form, scaling notes) left it, per direction, in file order, and reads each
-- frame as the first, in-order pass did. The file holds every frame sent (lost ones too), so the
-- contexts are the compressor's. The values of a CO frame are the transmitted least significant
-- bits: rebuilding them needs the decompressor's reference, which a dissector does not keep.
-- A non-TCP frame's sequence number and IP-ID are decoded against its context's last frame in the
-- file, which every CO-S, CO-I and CO-N frame decodes against at once (section 8). A non-TCP
-- context keeps its template, so that a replicated IR-N (its base's template with words changed)
-- is rebuilt whole and its check (over the header, transport checksum included) checked.
--
-- Use: tshark -X lua_script:wireshark/taroc.lua -r frames.pcap -V -O taroc
-- or copy this file into Wireshark's personal plugins folder.

local taroc = Proto("taroc", "TAROC header compression")

local PROFILE_AUTO, PROFILE_DRAFT, PROFILE_PLUS = 0, 1, 2
taroc.prefs.profile = Pref.enum("Profile", PROFILE_AUTO,
    "The format of the frames: auto (kinds 1 and 2 are the draft's, 8 to 0x7F taroc-plus's), "
    .. "draft (taroc, taroc-repair) or plus (taroc-plus, taroc-plus-u)",
    { { 1, "auto", PROFILE_AUTO }, { 2, "draft", PROFILE_DRAFT }, { 3, "plus", PROFILE_PLUS } },
    false)

local directions = { [0] = "forward", [1] = "reverse" }
local kinds = {
    [0] = "TYPE_IP",
    [1] = "UNCOMPRESSED_TCP",
    [2] = "COMPRESSED_TCP",
    [3] = "FULL_HEADER",
    [4] = "COMPRESSED_TCP_NODELTA",
    [5] = "COMPRESSED_NON_TCP",
    [6] = "CONTEXT_STATE",
    [0x08] = "IR",
    [0x09] = "IR-R",
    [0x0A] = "IR-N",
    [0x0B] = "IR-S",
    [0x0C] = "IR-R (source port kept)",
    [0x0D] = "IR-R (destination port kept)",
    [0x0E] = "compact IR",
    [0x0F] = "compact SYN",
    [0x20] = "tunnel",
}
for k = 0x10, 0x1c do kinds[k] = "CO-S" end
kinds[0x16] = "packed IR"
kinds[0x1D] = "CO-N"
kinds[0x1E] = "CO-I"
kinds[0x1F] = "CO-I (CID octet)"
for k = 0x21, 0x28 do kinds[k] = "CO (CID prefix)" end
for k = 0x29, 0x3f do kinds[k] = "CO (short code)" end
for k = 0x40, 0x7f do kinds[k] = "CO" end

-- Bit lengths of C_WIN, C_ACK, C_SEQ, C_IP_ID per PT (draft section 7.3.2.1).
local wasi_bits = { [0] = { 10, 11, 11, 3 }, { 14, 15, 15, 7 }, { 16, 19, 19, 11 }, { 16, 23, 23, 15 } }

local behaviours = { [0] = "sequential", [1] = "byte-swapped", [2] = "zero", [3] = "random" }
local feedback_types = {
    [1] = "TCP context request",
    [2] = "non-TCP context request",
    [3] = "loss note",
    [4] = "IR receipts",
    [5] = "pair note",
}
local layouts_compact = {
    [0] = "none",
    [1] = "NOP NOP TS",
    [2] = "MSS SACK-permitted TS NOP WS",
    [3] = "MSS NOP NOP SACK-permitted NOP WS",
}
local layouts_irs = { [0] = "raw", [1] = "MSS SACK-permitted TS NOP WS", [2] = "MSS NOP NOP SACK-permitted NOP WS" }
local flag_codes = { [0] = "sent", [1] = "SYN", [2] = "SYN, ACK", [3] = "RST" }

local function u8(abbr, name, b, vs, mask) return ProtoField.uint8(abbr, name, b or base.DEC, vs, mask) end
local function u16(abbr, name, b, vs, mask) return ProtoField.uint16(abbr, name, b or base.DEC, vs, mask) end
local function u32(abbr, name, b) return ProtoField.uint32(abbr, name, b or base.DEC) end
local function flag(abbr, name, mask) return ProtoField.bool(abbr, name, 8, nil, mask) end

local f = {
    -- Common.
    direction = u8("taroc.direction", "Direction", base.DEC, directions),
    kind = u8("taroc.kind", "Frame kind", base.HEX, kinds),
    profile = ProtoField.string("taroc.profile", "Format"),
    form = ProtoField.string("taroc.form", "Form"),
    family = ProtoField.string("taroc.family", "Stands for"),
    cid = u8("taroc.cid", "CID"),
    data_len = u32("taroc.data_len", "TCP data length"),
    -- The draft's.
    ctx_flags = u8("taroc.ctx_flags", "Context flags", base.HEX),
    ctx_random = flag("taroc.ctx_flags.random_ip_id", "RANDOM IP-ID", 0x01),
    ctx_ecn = u8("taroc.ctx_flags.ecn", "Usual ECN", base.DEC, nil, 0x06),
    flags = u8("taroc.flags", "Flags", base.HEX),
    flag_r = flag("taroc.flags.r", "R (R-octet present)", 0x80),
    flag_o = flag("taroc.flags.o", "O (options present)", 0x40),
    flag_i = flag("taroc.flags.i", "I (C_IP_ID present)", 0x20),
    flag_p = flag("taroc.flags.p", "P (TCP PSH)", 0x10),
    flag_s = flag("taroc.flags.s", "S (C_SEQ present)", 0x08),
    flag_a = flag("taroc.flags.a", "A (C_ACK present)", 0x04),
    flag_w = flag("taroc.flags.w", "W (C_WIN present)", 0x02),
    flag_u = flag("taroc.flags.u", "U (TCP URG, urgent pointer present)", 0x01),
    checksum = u16("taroc.tcp_checksum", "TCP checksum", base.HEX),
    ip_id = u16("taroc.ip_id", "IP-ID (RANDOM)", base.HEX),
    r_octet = u8("taroc.r_octet", "R-octet", base.HEX),
    urgent = u16("taroc.urgent", "Urgent pointer"),
    wasi = ProtoField.bytes("taroc.wasi", "WASI"),
    pt = u8("taroc.wasi.pt", "PT"),
    c_win = u32("taroc.wasi.win", "C_WIN (window LSBs)", base.HEX),
    c_ack = u32("taroc.wasi.ack", "C_ACK (ack LSBs)", base.HEX),
    c_seq = u32("taroc.wasi.seq", "C_SEQ (sequence LSBs)", base.HEX),
    c_ip_id = u32("taroc.wasi.ip_id", "C_IP_ID (IP-ID LSBs)", base.HEX),
    options = u8("taroc.options", "Options octet", base.HEX),
    opt_v = flag("taroc.options.v", "V (TS value present)", 0x08),
    opt_e = flag("taroc.options.e", "E (TS echo present)", 0x04),
    opt_sa = u8("taroc.options.sa", "SA (SACK blocks)", base.DEC, nil, 0x03),
    ts_val = u32("taroc.ts_val", "TS value LSBs", base.HEX),
    ts_val_bits = u8("taroc.ts_val.bits", "TS value bits"),
    ts_ecr = u32("taroc.ts_ecr", "TS echo LSBs", base.HEX),
    ts_ecr_bits = u8("taroc.ts_ecr.bits", "TS echo bits"),
    sack_offset = u32("taroc.sack.offset", "SACK left edge - ACK"),
    sack_size = u32("taroc.sack.size", "SACK block size"),
    request_type = u8("taroc.request.type", "Request type", base.HEX, { [1] = "context request" }),
    request_cid = u8("taroc.request.cid", "Requested CID"),

    -- taroc-plus: feedback (section 7).
    fb_type = u8("taroc.plus.fb.type", "Feedback type", base.HEX, feedback_types),
    fb_cid = u8("taroc.plus.fb.cid", "CID"),
    fb_checksum = u16("taroc.plus.fb.checksum", "TCP checksum field of the IR frame's packet", base.HEX),
    -- IR and compact IR context flags (section 3).
    p_ctx = u8("taroc.plus.ctx_flags", "Context flags", base.HEX),
    p_ctx_m = flag("taroc.plus.ctx_flags.m", "M (mirrored: the mirror's hash follows)", 0x80),
    p_ctx_n = flag("taroc.plus.ctx_flags.n", "N (mirror numbers: the reference's checksum follows)", 0x40),
    p_ctx_k = flag("taroc.plus.ctx_flags.k", "K (the stride is the acknowledgment stride)", 0x20),
    p_ctx_t = flag("taroc.plus.ctx_flags.t", "T (a stride in the urgent pointer field)", 0x10),
    p_ctx_ecn = u8("taroc.plus.ctx_flags.ecn", "E E (usual ECN)", base.DEC, nil, 0x0C),
    p_ctx_b = u8("taroc.plus.ctx_flags.ipid", "B B (IP-ID behaviour)", base.DEC, behaviours, 0x03),
    stride = u16("taroc.plus.stride", "Stride"),
    -- IR-R (section 4).
    irr_flags = u8("taroc.plus.irr_flags", "Context flags", base.HEX),
    irr_s = flag("taroc.plus.irr_flags.s", "S (the base's strides)", 0x80),
    irr_i = flag("taroc.plus.irr_flags.i", "I (the base's six IP bytes)", 0x40),
    irr_h = flag("taroc.plus.irr_flags.h", "H (timestamps)", 0x20),
    irr_t = flag("taroc.plus.irr_flags.t", "T (the strides follow)", 0x10),
    irr_ecn = u8("taroc.plus.irr_flags.ecn", "E E (usual ECN)", base.DEC, nil, 0x0C),
    irr_b = u8("taroc.plus.irr_flags.ipid", "B B (IP-ID behaviour)", base.DEC, behaviours, 0x03),
    base_cid = u8("taroc.plus.base_cid", "Base CID"),
    seq_stride = u16("taroc.plus.seq_stride", "Sequence stride"),
    ack_stride = u16("taroc.plus.ack_stride", "Acknowledgment stride"),
    ip_bytes = ProtoField.bytes("taroc.plus.ip_bytes", "IP bytes"),
    port_diff = ProtoField.int32("taroc.plus.port_diff", "Port difference from the base's"),
    -- IR-S (section 4.1).
    irs_shape = u8("taroc.plus.irs.shape", "Shape", base.HEX),
    irs_i = flag("taroc.plus.irs.shape.i", "I (the base's IP bytes)", 0x80),
    irs_p = flag("taroc.plus.irs.shape.p", "P (source port the base's)", 0x40),
    irs_q = flag("taroc.plus.irs.shape.q", "Q (destination port the base's)", 0x20),
    irs_m = flag("taroc.plus.irs.shape.m", "M (the base is a mirror)", 0x10),
    irs_x = flag("taroc.plus.irs.shape.x", "X (extension)", 0x08),
    irs_code = u8("taroc.plus.irs.shape.code", "Option layout", base.DEC, layouts_irs, 0x07),
    irs_ext = u8("taroc.plus.irs.ext", "Extension", base.HEX),
    irs_z = flag("taroc.plus.irs.ext.z", "Z (IPv4 Identification 0)", 0x80),
    irs_n = flag("taroc.plus.irs.ext.n", "N (mirror numbers)", 0x40),
    irs_s = flag("taroc.plus.irs.ext.s", "S (the usual MSS)", 0x20),
    irs_r = flag("taroc.plus.irs.ext.r", "R (the reference names the mirror)", 0x10),
    irs_w = flag("taroc.plus.irs.ext.w", "W (the usual window)", 0x08),
    irs_ff = u8("taroc.plus.irs.ext.flags", "F F (flags code)", base.DEC, flag_codes, 0x06),
    mirror_hash = u16("taroc.plus.mirror_hash", "Mirror's flow hash", base.HEX),
    mirror_flow = ProtoField.string("taroc.plus.mirror_flow", "Mirror"),
    ref_checksum = u16("taroc.plus.ref_checksum", "Reference's TCP checksum field", base.HEX),
    -- Compact IR and compact SYN (sections 3.1-3.5).
    shape = u8("taroc.plus.shape", "Shape", base.HEX),
    shape_v = flag("taroc.plus.shape.v", "V (IPv6)", 0x80),
    shape_t = flag("taroc.plus.shape.t", "T (TTL sent)", 0x40),
    shape_s = flag("taroc.plus.shape.s", "S (TOS / first four octets sent)", 0x20),
    shape_d = flag("taroc.plus.shape.d", "D (DF clear)", 0x10),
    shape_o = u8("taroc.plus.shape.o", "O O (option layout)", base.DEC, layouts_compact, 0x0C),
    shape_u = flag("taroc.plus.shape.u", "U (urgent pointer field sent)", 0x02),
    shape_z = flag("taroc.plus.shape.z", "Z (IPv4 Identification 0)", 0x01),
    short = u8("taroc.plus.short", "Shape (short form)", base.HEX),
    short_k = flag("taroc.plus.short.k", "K (acknowledgment stride)", 0x80),
    short_t = flag("taroc.plus.short.t", "T (a stride, the usual one)", 0x40),
    short_ecn = u8("taroc.plus.short.ecn", "E E (usual ECN)", base.DEC, nil, 0x30),
    short_o = u8("taroc.plus.short.o", "O O (3: the short form)", base.DEC, nil, 0x0C),
    short_b = u8("taroc.plus.short.ipid", "B B (IP-ID behaviour)", base.DEC, behaviours, 0x03),
    packed = u8("taroc.plus.packed", "Packed octet", base.HEX),
    packed_k = flag("taroc.plus.packed.k", "K (acknowledgment stride)", 0x80),
    packed_t = flag("taroc.plus.packed.t", "T (a stride, the usual one)", 0x40),
    packed_p = flag("taroc.plus.packed.p", "P (TCP PSH)", 0x20),
    packed_cid = u8("taroc.plus.packed.cid", "CID", base.DEC, nil, 0x1F),
    -- Header fields sent whole (compact IR, compact SYN, IR-S).
    h_tos = u8("taroc.plus.f.tos", "TOS", base.HEX),
    h_first = u32("taroc.plus.f.v6_first", "Version, traffic class, flow label", base.HEX),
    h_ttl = u8("taroc.plus.f.ttl", "TTL / hop limit"),
    h_ip_id = u16("taroc.plus.f.ip_id", "IPv4 Identification", base.HEX),
    h_src4 = ProtoField.ipv4("taroc.plus.f.src", "Source address"),
    h_dst4 = ProtoField.ipv4("taroc.plus.f.dst", "Destination address"),
    h_src6 = ProtoField.ipv6("taroc.plus.f.src6", "Source address"),
    h_dst6 = ProtoField.ipv6("taroc.plus.f.dst6", "Destination address"),
    h_sport = u16("taroc.plus.f.sport", "Source port"),
    h_dport = u16("taroc.plus.f.dport", "Destination port"),
    h_seq = u32("taroc.plus.f.seq", "Sequence number"),
    h_ack = u32("taroc.plus.f.ack", "Acknowledgment number"),
    h_offset = u8("taroc.plus.f.data_offset", "TCP data offset (octets)"),
    h_flags = u8("taroc.plus.f.tcp_flags", "TCP flags", base.HEX),
    h_window = u16("taroc.plus.f.window", "Window"),
    h_checksum = u16("taroc.plus.f.checksum", "TCP checksum field", base.HEX),
    h_urgent = u16("taroc.plus.f.urgent", "Urgent pointer field"),
    h_mss = u16("taroc.plus.f.mss", "MSS"),
    h_wscale = u8("taroc.plus.f.wscale", "Window scale"),
    h_ts_val = u32("taroc.plus.f.ts_val", "TS value"),
    h_ts_ecr = u32("taroc.plus.f.ts_ecr", "TS echo reply"),
    h_options = ProtoField.bytes("taroc.plus.f.options", "TCP options (raw)"),
    -- Mirror numbers: differences from the reference (section 3.4).
    d_seq = ProtoField.int32("taroc.plus.d.seq", "Sequence number - reference's acknowledgment number"),
    d_ack = ProtoField.int32("taroc.plus.d.ack", "Acknowledgment number - reference's next sequence number"),
    d_window = ProtoField.int32("taroc.plus.d.window", "Window - reference's window"),
    d_stride = ProtoField.int32("taroc.plus.d.stride", "Stride - usual stride"),
    d_ts_val = ProtoField.int32("taroc.plus.d.ts_val", "TS value - reference's TS echo"),
    d_ts_ecr = ProtoField.int32("taroc.plus.d.ts_ecr", "TS echo - reference's TS value"),
    -- IR-N, CO-S, CO-I, CO-N and tunnel frames (section 8).
    n_flags = u8("taroc.plus.n.flags", "Flags", base.HEX),
    n_udp = flag("taroc.plus.n.flags.udp", "UDP mode", 0x01),
    n_echo = flag("taroc.plus.n.flags.echo", "Echo mode", 0x02),
    n_rtp_mode = flag("taroc.plus.n.flags.rtp", "RTP mode (the UDP Length field carries the stride)", 0x04),
    n_step = flag("taroc.plus.n.flags.step", "Step (the IP-ID advances with the sequence number)", 0x08),
    n_frame = flag("taroc.plus.n.flags.frame", "Frame mode (the RTP timestamp stays within a frame)", 0x10),
    n_mode = ProtoField.string("taroc.plus.n.mode", "Context mode"),
    n_kind = u8("taroc.plus.n.kind", "Kind byte", base.HEX),
    n_co_flags = u8("taroc.plus.n.co_flags", "CO-N flags", base.HEX),
    n_co_c = flag("taroc.plus.n.co_flags.c", "C (CID octet)", 0x80),
    n_co_s = u8("taroc.plus.n.co_flags.s", "S (sequence number octets)", base.DEC, nil, 0x60),
    n_co_i = u8("taroc.plus.n.co_flags.i", "I (IP-ID octets)", base.DEC, nil, 0x18),
    n_co_f = flag("taroc.plus.n.co_flags.f", "F (flags and fragment offset)", 0x04),
    n_co_k = flag("taroc.plus.n.co_flags.k", "K (transport checksum)", 0x02),
    n_co_d = flag("taroc.plus.n.co_flags.d", "D (the IP-ID steps with the sequence number)", 0x01),
    n_id_octet = u8("taroc.plus.n.co_i", "CO-I octet", base.HEX),
    n_id_s = u8("taroc.plus.n.co_i.s", "S (sequence number LSBs)", base.DEC, nil, 0xC0),
    n_id_i = u8("taroc.plus.n.co_i.i", "I (IP-ID LSBs)", base.HEX, nil, 0x3F),
    n_id_s3 = u8("taroc.plus.n.co_i.s3", "S (sequence number LSBs, frame mode)", base.DEC, nil, 0xE0),
    n_id_m = flag("taroc.plus.n.co_i.m", "M (RTP marker, frame mode)", 0x10),
    n_id_t = flag("taroc.plus.n.co_i.t", "T (the scaled timestamp's LSB, frame mode)", 0x08),
    n_id_o = u8("taroc.plus.n.co_i.o", "O (LSBs of the IP-ID minus the sequence number, frame mode)",
        base.HEX, nil, 0x07),
    n_seq_lsbs = u16("taroc.plus.n.seq_lsbs", "Sequence number LSBs", base.HEX),
    n_seq_lsbs_bits = u8("taroc.plus.n.seq_lsbs.bits", "Sequence number bits"),
    n_seq = u16("taroc.plus.n.seq", "Sequence number"),
    n_ip_id = u16("taroc.plus.n.ip_id", "IP-ID LSBs", base.HEX),
    n_ip_id_bits = u8("taroc.plus.n.ip_id.bits", "IP-ID bits"),
    n_ip_id_value = u16("taroc.plus.n.ip_id.value", "IP-ID", base.HEX),
    n_frag = u16("taroc.plus.n.frag", "Flags and fragment offset", base.HEX),
    n_rtp = u8("taroc.plus.n.rtp", "RTP octet", base.HEX),
    n_rtp_t = u8("taroc.plus.n.rtp.t", "T (timestamp code)", base.DEC, nil, 0xC0),
    n_rtp_m = flag("taroc.plus.n.rtp.m", "M (RTP marker)", 0x20),
    n_rtp_v = flag("taroc.plus.n.rtp.v", "V (frame mode)", 0x10),
    n_ts = u32("taroc.plus.n.ts", "Timestamp field"),
    n_ts_bits = u8("taroc.plus.n.ts.bits", "Timestamp bits (scaled LSBs, or 32: the timestamp)"),
    n_stride = u16("taroc.plus.n.stride", "Timestamp stride"),
    n_crc = u16("taroc.plus.n.crc", "Check of the header (16 bits)", base.HEX),
    n_checksum = u16("taroc.plus.n.checksum", "Transport checksum (carried)", base.HEX),
    n_checksum_computed = ProtoField.bool("taroc.plus.n.checksum_computed",
        "Transport checksum left to the decompressor (computed, or 0)"),
    n_payload = u32("taroc.plus.n.payload_len", "Payload length"),
    -- Replicated IR-N (section 8).
    n_form = u8("taroc.plus.n.replica.form", "Replicated IR-N form octet", base.HEX),
    n_form_k = flag("taroc.plus.n.replica.form.k", "K (transport checksum)", 0x08),
    n_form_f = flag("taroc.plus.n.replica.form.f", "F (flags and fragment offset)", 0x04),
    n_form_m = flag("taroc.plus.n.replica.form.m", "M (RTP marker)", 0x02),
    n_changes = u8("taroc.plus.n.replica.changes", "Template words changed"),
    n_change = ProtoField.bytes("taroc.plus.n.replica.change", "Changed word"),
    n_word_index = u8("taroc.plus.n.replica.word_index", "Word index (octets 2i and 2i + 1)"),
    n_word = u16("taroc.plus.n.replica.word", "Word", base.HEX),
    n_rtp_ts = u32("taroc.plus.n.rtp_ts", "RTP timestamp"),
    n_marker = ProtoField.bool("taroc.plus.n.marker", "RTP marker"),
    n_header = ProtoField.bytes("taroc.plus.n.header", "Rebuilt header (its transport checksum filled in)"),
    n_crc_ok = ProtoField.bool("taroc.plus.n.crc_ok", "The check matches the rebuilt header"),
    t_outer = ProtoField.none("taroc.plus.tunnel.outer", "Outer header (CO-N)"),
    t_kind = u8("taroc.plus.tunnel.kind", "CO-N kind byte", base.HEX),
    t_flags = u8("taroc.plus.tunnel.flags", "Outer CO-N flags", base.HEX),
    t_cid = u8("taroc.plus.tunnel.cid", "Outer CID"),
    t_seq_lsbs = u16("taroc.plus.tunnel.seq_lsbs", "Outer sequence number LSBs", base.HEX),
    t_seq_lsbs_bits = u8("taroc.plus.tunnel.seq_lsbs.bits", "Outer sequence number bits"),
    t_seq = u16("taroc.plus.tunnel.seq", "Outer sequence number"),
    t_ip_id = u16("taroc.plus.tunnel.ip_id", "Outer IP-ID LSBs", base.HEX),
    t_ip_id_bits = u8("taroc.plus.tunnel.ip_id.bits", "Outer IP-ID bits"),
    t_outer_id = u16("taroc.plus.tunnel.outer_id", "Outer Identification", base.HEX),
    t_frag = u16("taroc.plus.tunnel.frag", "Outer flags and fragment offset", base.HEX),
    t_crc = u16("taroc.plus.tunnel.crc", "Check of the outer header (16 bits)", base.HEX),
    t_kept = ProtoField.bool("taroc.plus.tunnel.kept", "Outer header kept in the inner context"),
    t_inner = u8("taroc.plus.tunnel.inner_kind", "Inner kind byte", base.HEX, kinds),
    -- CO (section 5).
    co_kind = u8("taroc.plus.co_kind", "CO kind byte", base.HEX),
    co_x = flag("taroc.plus.co_kind.x", "X (extension)", 0x20),
    co_p = flag("taroc.plus.co_kind.p", "P (TCP PSH)", 0x10),
    co_s = u8("taroc.plus.co_kind.s", "S S (sequence class)", base.DEC, nil, 0x0C),
    co_a = u8("taroc.plus.co_kind.a", "A A (acknowledgment class)", base.DEC, nil, 0x03),
    prefix_octet = u8("taroc.plus.prefix_octet", "CID bits and CO kind bits", base.HEX),
    ext_short = u8("taroc.plus.ext", "Extension (short)", base.HEX),
    ext_short_w = flag("taroc.plus.ext.w", "W (window code in v)", 0x40),
    ext_short_k = flag("taroc.plus.ext.k", "K (SACK)", 0x20),
    ext_short_v = u8("taroc.plus.ext.v", "v", base.HEX, nil, 0x1F),
    ext_long = u8("taroc.plus.ext_long", "Extension (long)", base.HEX),
    ext_c = flag("taroc.plus.ext_long.c", "C (CID octet)", 0x40),
    ext_w = flag("taroc.plus.ext_long.w", "W (window)", 0x20),
    ext_r = flag("taroc.plus.ext_long.r", "R (R-octet)", 0x10),
    ext_u = flag("taroc.plus.ext_long.u", "U (TCP URG, urgent pointer)", 0x08),
    ext_k = flag("taroc.plus.ext_long.k", "K (SACK)", 0x04),
    ext_f = flag("taroc.plus.ext_long.f", "F (TCP FIN)", 0x02),
    ext_m = flag("taroc.plus.ext_long.m", "M (second octet)", 0x01),
    ext2 = u8("taroc.plus.ext2", "Extension, second octet", base.HEX),
    ext2_q = flag("taroc.plus.ext2.q", "Q (sequence number unscaled)", 0x80),
    ext2_z = flag("taroc.plus.ext2.z", "Z (acknowledgment number unscaled)", 0x40),
    ext2_o = flag("taroc.plus.ext2.o", "O (outer Identification coded)", 0x20),
    ext2_n = flag("taroc.plus.ext2.n", "N (scaling note)", 0x10),
    ext2_v = flag("taroc.plus.ext2.v", "V (check follows)", 0x08),
    note = u8("taroc.plus.note", "Scaling note", base.HEX),
    note_k = flag("taroc.plus.note.k", "K (acknowledgment stride)", 0x20),
    note_t = flag("taroc.plus.note.t", "T (a stride follows)", 0x10),
    note_b = u8("taroc.plus.note.ipid", "B B (IP-ID behaviour)", base.DEC, behaviours, 0x03),
    note_stride = u16("taroc.plus.note.stride", "Stride"),
    co_checksum = u16("taroc.plus.checksum", "Checksum field (TCP checksum + IPv4 IP-ID, XOR seal)", base.HEX),
    co_check = u16("taroc.plus.check", "Check (16 more bits of the seal)", base.HEX),
    ctx_seq_stride = u16("taroc.plus.ctx.seq_stride", "Context's sequence stride"),
    ctx_ack_stride = u16("taroc.plus.ctx.ack_stride", "Context's acknowledgment stride"),
    ctx_ts = ProtoField.bool("taroc.plus.ctx.ts", "Context has timestamps"),
    bitfield = ProtoField.none("taroc.plus.bits", "Bit field"),
    seq = u32("taroc.plus.seq", "Sequence LSBs", base.HEX),
    seq_bits = u8("taroc.plus.seq.bits", "Sequence bits"),
    seq_scale = u16("taroc.plus.seq.stride", "Sequence scaled by"),
    ack = u32("taroc.plus.ack", "Acknowledgment LSBs", base.HEX),
    ack_bits = u8("taroc.plus.ack.bits", "Acknowledgment bits"),
    ack_scale = u16("taroc.plus.ack.stride", "Acknowledgment scaled by"),
    ip_id_behaviour = u8("taroc.plus.ip_id.behaviour", "IP-ID behaviour", base.DEC, behaviours),
    ip_id_code = u8("taroc.plus.ip_id.code", "IP-ID offset code"),
    ip_id_lsbs = u16("taroc.plus.ip_id", "IP-ID offset LSBs", base.HEX),
    ip_id_bits = u8("taroc.plus.ip_id.bits", "IP-ID offset bits"),
    ip_id_random = u16("taroc.plus.ip_id.random", "IP-ID (random)", base.HEX),
    ts_val_code = u8("taroc.plus.ts_val.code", "TS value code"),
    p_ts_val = u32("taroc.plus.ts_val", "TS value LSBs", base.HEX),
    p_ts_val_bits = u8("taroc.plus.ts_val.bits", "TS value bits"),
    ts_ecr_code = u8("taroc.plus.ts_ecr.code", "TS echo code"),
    p_ts_ecr = u32("taroc.plus.ts_ecr", "TS echo LSBs", base.HEX),
    p_ts_gap = u32("taroc.plus.ts_gap", "TS value - TS echo LSBs", base.HEX),
    p_ts_ecr_bits = u8("taroc.plus.ts_ecr.bits", "TS echo bits"),
    window = u16("taroc.plus.window", "Window LSBs", base.HEX),
    window_bits = u8("taroc.plus.window.bits", "Window bits"),
    sack_header = u8("taroc.plus.sack.header", "SACK header"),
    sack_count = u8("taroc.plus.sack.count", "SACK blocks"),
    sack_scaled = ProtoField.bool("taroc.plus.sack.scaled", "SACK scaled"),
    sack_order = u8("taroc.plus.sack.order", "Exp-Golomb order"),
    sack_stride = u16("taroc.plus.sack.stride", "SACK scaled by"),
    p_sack_offset = u32("taroc.plus.sack.offset", "SACK (left edge - ACK) / scale"),
    p_sack_size = u32("taroc.plus.sack.size", "SACK (right edge - left edge) / scale"),
    outer_marker = u8("taroc.plus.outer_id.marker", "Outer Identification marker"),
    outer_code = u8("taroc.plus.outer_id.code", "Outer Identification code"),
    outer_offset = u8("taroc.plus.outer_id.offset", "Outer offset LSBs (outer - inner IP-ID)", base.HEX),
    outer_whole = u16("taroc.plus.outer_id.value", "Outer Identification", base.HEX),
    padding = u8("taroc.plus.padding", "Padding (bits of the field hash, section 5.8)"),
    p_r_octet = u8("taroc.plus.r_octet", "R-octet", base.HEX),
    r_reserved = u8("taroc.plus.r_octet.reserved", "TCP reserved bits", base.HEX, nil, 0xF0),
    r_cwr = flag("taroc.plus.r_octet.cwr", "CWR", 0x08),
    r_ece = flag("taroc.plus.r_octet.ece", "ECE", 0x04),
    r_ecn = u8("taroc.plus.r_octet.ecn", "IP ECN", base.DEC, nil, 0x03),
    p_urgent = u16("taroc.plus.urgent", "Urgent pointer"),
    tcp_flags = u8("taroc.plus.tcp_flags", "TCP flags", base.HEX),
}
taroc.fields = f

local e_malformed = ProtoExpert.new("taroc.malformed", "Malformed TAROC frame",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_unknown_ctx = ProtoExpert.new("taroc.unknown_context",
    "No UNCOMPRESSED_TCP seen for this CID: IP-ID mode assumed not RANDOM",
    expert.group.SEQUENCE, expert.severity.NOTE)
local e_unknown_kind = ProtoExpert.new("taroc.unknown_kind",
    "A kind byte this format does not send", expert.group.MALFORMED, expert.severity.WARN)
local e_no_context = ProtoExpert.new("taroc.plus.no_context",
    "No frame that set this context up is in the file: the rest cannot be read",
    expert.group.SEQUENCE, expert.severity.WARN)
local e_guess = ProtoExpert.new("taroc.plus.guess",
    "Mirror not known: its IP version taken from the frames before", expert.group.SEQUENCE,
    expert.severity.NOTE)
local e_bug = ProtoExpert.new("taroc.dissector_error", "Dissector error",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_crc = ProtoExpert.new("taroc.plus.crc_mismatch",
    "The check does not match the rebuilt header: the decompressor refuses the frame",
    expert.group.CHECKSUM, expert.severity.WARN)
taroc.experts = { e_malformed, e_unknown_ctx, e_unknown_kind, e_no_context, e_guess, e_bug, e_crc }

local ip_dissector = Dissector.get("ip")
local ipv6_dissector = Dissector.get("ipv6")
local data_dissector = Dissector.get("data")

local function ip_dissect(tvb, pinfo, tree)
    if tvb:len() > 0 and tvb(0, 1):bitfield(0, 4) == 6 then
        ipv6_dissector:call(tvb, pinfo, tree)
    else
        ip_dissector:call(tvb, pinfo, tree)
    end
end

-- ---------------------------------------------------------------------------------------------
-- The draft's format.

-- The RANDOM IP-ID flag of each context, per direction, as the UNCOMPRESSED_TCP frames seen so
-- far set it; and, per frame, the flag its COMPRESSED_TCP was read with (so that a second pass,
-- or a click in the GUI, reads a frame as the first, in-order pass did).
local random_ip_id = { [0] = {}, [1] = {} }
local frame_random = {}

-- UNCOMPRESSED_TCP: restore the length field, remember the context's IP-ID mode, dissect as IP.
local function uncompressed_tcp(tvb, pinfo, tree, subtree, direction)
    if tvb:len() < 20 then
        subtree:add_proto_expert_info(e_malformed)
        return
    end
    local v6 = tvb(0, 1):bitfield(0, 4) == 6
    local at = v6 and 4 or 2
    local flags_item = subtree:add(f.ctx_flags, tvb(at, 1))
    flags_item:add(f.ctx_random, tvb(at, 1))
    flags_item:add(f.ctx_ecn, tvb(at, 1))
    subtree:add(f.cid, tvb(at + 1, 1))
    local cid = tvb(at + 1, 1):uint()
    if not pinfo.visited then
        random_ip_id[direction][cid] = (not v6) and tvb(at, 1):bitfield(7, 1) == 1
    end
    local bytes = tvb:bytes()
    local length = v6 and (tvb:len() - 40) or tvb:len()
    bytes:set_index(at, math.floor(length / 256) % 256)
    bytes:set_index(at + 1, length % 256)
    ip_dissect(bytes:tvb("Packet with its length restored"), pinfo, tree)
end

-- One TS prefix code at `at`: LSBs, their number, octets used (nil if malformed).
local function ts_code(tvb, at)
    if at >= tvb:len() then return nil end
    local first = tvb(at, 1):uint()
    if first < 0x80 then return first, 7, 1 end
    if first < 0xC0 and at + 2 <= tvb:len() then return tvb(at, 2):uint() % 0x4000, 14, 2 end
    if first < 0xE0 and at + 3 <= tvb:len() then return tvb(at, 3):uint() % 0x200000, 21, 3 end
    if first < 0xF0 and at + 5 <= tvb:len() then return tvb(at + 1, 4):uint(), 32, 5 end
    return nil
end

-- One RFC 1144 delta at `at`: value and octets used (nil if malformed).
local function delta(tvb, at)
    if at >= tvb:len() then return nil end
    local first = tvb(at, 1):uint()
    if first ~= 0 then return first, 1 end
    if at + 3 > tvb:len() then return nil end
    return tvb(at + 1, 2):uint(), 3
end

local function compressed_tcp(tvb, pinfo, tree, subtree, direction)
    local len = tvb:len()
    if len < 4 then
        subtree:add_proto_expert_info(e_malformed)
        return
    end
    local cid = tvb(0, 1):uint()
    subtree:add(f.cid, tvb(0, 1))
    local flags = tvb(1, 1):uint()
    local flags_item = subtree:add(f.flags, tvb(1, 1))
    for _, bit in ipairs({ f.flag_r, f.flag_o, f.flag_i, f.flag_p, f.flag_s, f.flag_a, f.flag_w,
        f.flag_u }) do
        flags_item:add(bit, tvb(1, 1))
    end
    subtree:add(f.checksum, tvb(2, 2))
    local at = 4
    local random = frame_random[pinfo.number]
    if random == nil then
        random = random_ip_id[direction][cid]
        if random == nil then
            subtree:add_proto_expert_info(e_unknown_ctx)
            random = false
        end
        frame_random[pinfo.number] = random
    end
    local function need(n)
        if at + n > len then
            subtree:add_proto_expert_info(e_malformed)
            return false
        end
        return true
    end
    if random then
        if not need(2) then return end
        subtree:add(f.ip_id, tvb(at, 2)); at = at + 2
    end
    if bit32.band(flags, 0x80) ~= 0 then
        if not need(1) then return end
        subtree:add(f.r_octet, tvb(at, 1)); at = at + 1
    end
    if bit32.band(flags, 0x01) ~= 0 then
        if not need(2) then return end
        subtree:add(f.urgent, tvb(at, 2)); at = at + 2
    end
    -- WASI, in the order W A S I.
    local present = {
        bit32.band(flags, 0x02) ~= 0, bit32.band(flags, 0x04) ~= 0,
        bit32.band(flags, 0x08) ~= 0, bit32.band(flags, 0x20) ~= 0,
    }
    if present[1] or present[2] or present[3] or present[4] then
        if not need(1) then return end
        local pt = tvb(at, 1):bitfield(0, 2)
        local bits = 2
        for i = 1, 4 do
            if present[i] then bits = bits + wasi_bits[pt][i] end
        end
        local octets = math.ceil(bits / 8)
        if not need(octets) then return end
        local range = tvb(at, octets)
        local wasi = subtree:add(f.wasi, range)
        wasi:add(f.pt, tvb(at, 1), pt)
        local position = 2
        local fields = { f.c_win, f.c_ack, f.c_seq, f.c_ip_id }
        for i = 1, 4 do
            if present[i] then
                local n = wasi_bits[pt][i]
                local value = range:bitfield(position, n)
                local first = math.floor(position / 8)
                local last = math.floor((position + n - 1) / 8)
                wasi:add(fields[i], range(first, last - first + 1), value):append_text(
                    string.format(" (%d bits)", n))
                position = position + n
            end
        end
        at = at + octets
    end
    if bit32.band(flags, 0x40) ~= 0 then
        if not need(1) then return end
        local octet = tvb(at, 1):uint()
        local options = subtree:add(f.options, tvb(at, 1))
        options:add(f.opt_v, tvb(at, 1))
        options:add(f.opt_e, tvb(at, 1))
        options:add(f.opt_sa, tvb(at, 1))
        at = at + 1
        for _, ts in ipairs({ { 0x08, f.ts_val, f.ts_val_bits }, { 0x04, f.ts_ecr, f.ts_ecr_bits } }) do
            if bit32.band(octet, ts[1]) ~= 0 then
                local value, bits, used = ts_code(tvb, at)
                if value == nil then
                    subtree:add_proto_expert_info(e_malformed)
                    return
                end
                local item = options:add(ts[2], tvb(at, used), value)
                item:add(ts[3], tvb(at, used), bits)
                at = at + used
            end
        end
        for _ = 1, bit32.band(octet, 0x03) do
            local offset, used1 = delta(tvb, at)
            if offset == nil then
                subtree:add_proto_expert_info(e_malformed)
                return
            end
            options:add(f.sack_offset, tvb(at, used1), offset)
            at = at + used1
            local size, used2 = delta(tvb, at)
            if size == nil then
                subtree:add_proto_expert_info(e_malformed)
                return
            end
            options:add(f.sack_size, tvb(at, used2), size)
            at = at + used2
        end
    end
    subtree:set_len(2 + at)
    subtree:add(f.data_len, len - at):set_generated()
    if at < len then
        data_dissector:call(tvb(at):tvb(), pinfo, tree)
    end
end

local function context_state(tvb, pinfo, subtree)
    if tvb:len() < 2 then
        subtree:add_proto_expert_info(e_malformed)
        return
    end
    subtree:add(f.request_type, tvb(0, 1))
    for at = 1, tvb:len() - 1 do
        subtree:add(f.request_cid, tvb(at, 1))
    end
end

-- ---------------------------------------------------------------------------------------------
-- taroc-plus: reading helpers.

-- Raised (as an error value) where a frame ends too soon or breaks a rule of its format.
local MALFORMED = setmetatable({}, { __tostring = function() return "malformed" end })
local function malformed() error(MALFORMED, 0) end

local TWO32 = 4294967296

-- Octets read in order from `at`.
local Reader = {}
Reader.__index = Reader
local function reader(tvb, at) return setmetatable({ tvb = tvb, at = at or 0 }, Reader) end
function Reader:left() return self.tvb:len() - self.at end
function Reader:take(n)
    if n < 1 or self.at + n > self.tvb:len() then malformed() end
    local range = self.tvb(self.at, n)
    self.at = self.at + n
    return range
end
-- The rest (nil if none).
function Reader:rest()
    if self.at >= self.tvb:len() then return nil end
    return self.tvb(self.at)
end
-- An unsigned LEB128 number of at most 5 octets and 32 bits, and its range.
function Reader:leb()
    local z, mul, i = 0, 1, 0
    while true do
        if i == 5 or self.at + i >= self.tvb:len() then malformed() end
        local b = self.tvb(self.at + i, 1):uint()
        z = z + (b % 128) * mul
        mul = mul * 128
        i = i + 1
        if b < 128 then break end
    end
    if z >= TWO32 then malformed() end
    return z, self:take(i)
end
-- A signed difference (zigzag, then LEB128; section 3.4) and its range.
function Reader:signed()
    local z, range = self:leb()
    if z % 2 == 0 then return z / 2, range end
    return -(z + 1) / 2, range
end

-- Bits read in order from a range (nil: no octets left).
local Bits = {}
Bits.__index = Bits
local function bit_reader(range)
    return setmetatable({ range = range, pos = 0, len = range and range:len() * 8 or 0 }, Bits)
end
function Bits:get(n)
    if n == 0 then return 0 end
    if self.pos + n > self.len then malformed() end
    local v = self.range:bitfield(self.pos, n)
    self.pos = self.pos + n
    return v
end
-- The octets bits [from, pos) touch (nil for no octet).
function Bits:span(from)
    if self.range == nil then return nil end
    local first = math.floor(from / 8)
    if first >= self.range:len() then return nil end
    local last = math.floor((math.max(self.pos, from + 1) - 1) / 8)
    if last >= self.range:len() then last = self.range:len() - 1 end
    return self.range(first, last - first + 1)
end
-- A prefix code `0`, `10`, `110`, `111`: 0 to 3.
function Bits:prefix()
    for c = 0, 2 do
        if self:get(1) == 0 then return c end
    end
    return 3
end
-- An exp-Golomb code of order k (section 5.6).
function Bits:eg(k)
    local z = 0
    while self:get(1) == 0 do
        z = z + 1
        if z > 32 then malformed() end
    end
    local n = 2 ^ z + self:get(z)
    local v = (n - 1) * 2 ^ k + self:get(k)
    if v >= TWO32 then malformed() end
    return v
end

-- Adds `field` with `value` for the bits [from, bits.pos) of a bit field, noting where they are.
local function add_bits(tree, field, bits, from, value, text)
    local range = bits:span(from)
    local item
    if range ~= nil and bits.pos > from then
        item = tree:add(field, range, value)
    else
        item = tree:add(field, value)
    end
    local n = bits.pos - from
    if n > 0 then
        item:append_text(string.format(" (%d bit%s at bit %d%s)", n, n == 1 and "" or "s", from, text or ""))
    else
        item:append_text(" (no bits" .. (text or "") .. ")")
    end
    return item
end

-- The text of a prefix code `c` of `n` LSBs.
local PREFIXES = { [0] = "0", "10", "110", "111" }
local function code_text(c, n)
    return string.format(", code %d: prefix %s and %d LSBs", c, PREFIXES[c], n)
end

-- The TCP data at the end of a frame.
local function payload(r, pinfo, tree)
    local rest = r:rest()
    if rest ~= nil then data_dissector:call(rest:tvb(), pinfo, tree) end
end

local function add_generated(tree, field, value)
    local item = tree:add(field, value)
    item:set_generated()
    return item
end

-- 32-bit FNV-1a helpers (section 3.3).
local function mul32(a, b)
    local lo, hi = a % 65536, math.floor(a / 65536)
    return ((hi * b) % 65536 * 65536 + lo * b) % TWO32
end
local function fnv(bytes, h)
    h = h or 0x811c9dc5
    for i = 1, #bytes do
        h = mul32(bit32.bxor(h, bytes:byte(i)), 0x01000193)
    end
    return h
end
local function be16(n) return string.char(math.floor(n / 256) % 256, n % 256) end

-- A flow: addresses (raw octets), ports and IP version.
local function flow_octets(flow)
    return string.char(flow.v4 and 4 or 6) .. flow.src .. flow.dst .. be16(flow.sport) .. be16(flow.dport)
end
local function flow_hash(flow)
    local h = fnv(flow_octets(flow))
    return bit32.bxor(math.floor(h / 65536), h % 65536)
end
local function reversed(flow)
    return { v4 = flow.v4, src = flow.dst, dst = flow.src, sport = flow.dport, dport = flow.sport }
end
local function address_text(raw)
    if #raw == 4 then
        return string.format("%d.%d.%d.%d", raw:byte(1, 4))
    end
    local groups = {}
    for i = 1, 16, 2 do
        groups[#groups + 1] = string.format("%x", raw:byte(i) * 256 + raw:byte(i + 1))
    end
    return table.concat(groups, ":")
end
local function flow_text(flow)
    return string.format("%s:%d -> %s:%d", address_text(flow.src), flow.sport,
        address_text(flow.dst), flow.dport)
end

-- ---------------------------------------------------------------------------------------------
-- taroc-plus: what the frames so far set up.
--
-- Per direction: `tcp[cid]` the TCP contexts ({v4, ts, seq_stride, ack_stride, behaviour, outer
-- (false, or {v4, zero}: an outer header kept, and whether the IPv4 Identification predictor is
-- zero), flow (or false)}); `other[cid]` the non-TCP contexts ({v4, udp, rtp, echo, step,
-- stride, and the last frame's seq, ip_id, frag; outer (the header can be an outer one); template
-- (the header with its per-packet fields zeroed, as a string)}); `hashes[hash]` and `checksums[checksum]` the flows
-- of this direction's frames (what the opposite direction's mirrors name). Contexts are never
-- changed in place (a change makes a new table), and every look-up of a frame's first pass is
-- kept for the frame, so that a later pass reads it as the first did.

local state
local memo = {}
local current -- the current frame's look-ups; nil: the first pass

local function plus_init()
    state = {
        tcp = { [0] = {}, [1] = {} },
        other = { [0] = {}, [1] = {} },
        pair = { [0] = {}, [1] = {} },
        hashes = { [0] = {}, [1] = {} },
        checksums = { [0] = {}, [1] = {} },
        misc = { [0] = {}, [1] = {} },
    }
    memo = {}
end
plus_init()

local NONE = {}
local function look(table_name, dir, key)
    local name = table_name .. "/" .. dir .. "/" .. tostring(key)
    if current ~= nil and current.replay then
        local v = current.values[name]
        if v == NONE then return nil end
        return v
    end
    local v = state[table_name][dir][key]
    if current ~= nil then
        if v == nil then current.values[name] = NONE else current.values[name] = v end
    end
    return v
end
local function store(table_name, dir, key, value)
    if current ~= nil and current.replay then return end
    state[table_name][dir][key] = value
end
local function with(t, changes)
    local n = {}
    for k, v in pairs(t) do n[k] = v end
    for k, v in pairs(changes) do n[k] = v end
    return n
end

-- A flow of direction `dir` went by (its packet's TCP checksum field, if known).
local function tell(dir, flow, checksum)
    if not flow then return end
    store("hashes", dir, flow_hash(flow), flow)
    if checksum ~= nil then store("checksums", dir, checksum, flow) end
    store("misc", 0, "v4", flow.v4)
end
-- The flow a frame of direction `dir` names as its mirror, by hash or by reference checksum.
local function mirror_by_hash(dir, hash) return look("hashes", 1 - dir, hash) end
local function mirror_by_checksum(dir, checksum) return look("checksums", 1 - dir, checksum) end
local function last_v4()
    local v = look("misc", 0, "v4")
    if v == nil then return true end
    return v
end

-- The prefix codes of a context (section 5.5): IP-ID offset LSBs, TS value LSBs, TS echo
-- (gap?, LSBs) per code.
local CODES_STRIDED = {
    ip_id = { 0, 2, 6, 16 }, ts = { 8, 9, 11, 32 },
    ecr = { { true, 7 }, { true, 10 }, { true, 2 }, { false, 32 } },
}
local CODES_ACK = {
    ip_id = { 5, 0, 8, 16 }, ts = { 9, 10, 12, 32 },
    ecr = { { true, 8 }, { true, 6 }, { false, 11 }, { false, 32 } },
}
local CODES_UNSTRIDED = {
    ip_id = { 5, 7, 10, 16 }, ts = { 13, 14, 15, 32 },
    ecr = { { false, 13 }, { true, 4 }, { false, 15 }, { false, 32 } },
}
local SCALED_BITS = { [0] = 0, 6, 8, 16 }
local UNSCALED_BITS = { [0] = 0, 10, 16, 32 }
local SACK_ORDERS = { [0] = 0, 1, 3, 10 }

local SHORT_KINDS = { 0x4C, 0x61, 0x44, 0x67, 0x54, 0x63, 0x55, 0x5C, 0x6B, 0x45, 0x6E, 0x43, 0x4D, 0x5D, 0x62 }

-- The information of an IP packet (an IR or IR-N frame with its length field restored):
-- version, header length, protocol, addresses; for TCP its ports, checksum field and whether
-- it has the Timestamps option.
local function packet_info(tvb)
    local len = tvb:len()
    if len < 20 then malformed() end
    local version = tvb(0, 1):bitfield(0, 4)
    local p = {}
    if version == 4 then
        local ihl = tvb(0, 1):bitfield(4, 4) * 4
        if ihl < 20 or len < ihl then malformed() end
        p.v4, p.header, p.proto = true, ihl, tvb(9, 1):uint()
        p.src, p.dst = tvb:raw(12, 4), tvb:raw(16, 4)
        p.ip_id, p.frag = tvb(4, 2):uint(), tvb(6, 2):uint()
    elseif version == 6 then
        if len < 40 then malformed() end
        local nh, at = tvb(6, 1):uint(), 40
        p.next = nh
        while nh == 0 or nh == 43 or nh == 60 or nh == 44 or nh == 51 do
            if at + 8 > len then malformed() end
            local nxt = tvb(at, 1):uint()
            if nh == 44 then
                at = at + 8
            elseif nh == 51 then
                at = at + (tvb(at + 1, 1):uint() + 2) * 4
            else
                at = at + (tvb(at + 1, 1):uint() + 1) * 8
            end
            nh = nxt
        end
        p.v4, p.header, p.proto = false, at, nh
        p.src, p.dst = tvb:raw(8, 16), tvb:raw(24, 16)
        p.ip_id, p.frag = 0, 0
    else
        malformed()
    end
    local t = p.header
    if p.proto == 6 and len >= t + 20 then
        p.sport, p.dport = tvb(t, 2):uint(), tvb(t + 2, 2):uint()
        p.checksum = tvb(t + 16, 2):uint()
        p.urgent_at = t + 18
        local options_end = t + tvb(t + 12, 1):bitfield(0, 4) * 4
        local at = t + 20
        p.ts = false
        while at < options_end and at < len do
            local kind = tvb(at, 1):uint()
            if kind == 0 then break end
            if kind == 1 then
                at = at + 1
            else
                if at + 1 >= len then break end
                if kind == 8 then p.ts = true end
                local l = tvb(at + 1, 1):uint()
                if l < 2 then break end
                at = at + l
            end
        end
        p.flow = { v4 = p.v4, src = p.src, dst = p.dst, sport = p.sport, dport = p.dport }
    end
    return p
end

-- The frame with its first length field, at `at`, restored from its length (and the urgent
-- pointer field at `urgent_at` zeroed, if given), as a new tvb.
local function restored(tvb, at, urgent_at, label)
    local bytes = tvb:bytes()
    local length = tvb:len()
    if at == 4 then length = length - 40 end
    bytes:set_index(at, math.floor(length / 256) % 256)
    bytes:set_index(at + 1, length % 256)
    if urgent_at ~= nil and urgent_at + 1 < tvb:len() then
        bytes:set_index(urgent_at, 0)
        bytes:set_index(urgent_at + 1, 0)
    end
    return bytes:tvb(label)
end

-- The outer header a context set up in a tunnel frame keeps (section 8.1), as the context's
-- `outer`: false outside a tunnel or for an outer header not kept.
local function outer_of(tunnel)
    if tunnel == nil or not tunnel.kept then return false end
    return { v4 = tunnel.v4, zero = tunnel.outer_id == 0 }
end

local function add_ctx_flags(tree, range, compact)
    local item = tree:add(f.p_ctx, range)
    if compact then
        item:add(f.p_ctx_m, range)
        item:add(f.p_ctx_n, range)
    end
    item:add(f.p_ctx_k, range)
    item:add(f.p_ctx_t, range)
    item:add(f.p_ctx_ecn, range)
    item:add(f.p_ctx_b, range)
    return item
end

local function tcp_flags_text(v)
    local names = {}
    for _, b in ipairs({ { 0x80, "CWR" }, { 0x40, "ECE" }, { 0x20, "URG" }, { 0x10, "ACK" },
        { 0x08, "PSH" }, { 0x04, "RST" }, { 0x02, "SYN" }, { 0x01, "FIN" } }) do
        if bit32.band(v, b[1]) ~= 0 then names[#names + 1] = b[2] end
    end
    return " (" .. table.concat(names, ", ") .. ")"
end

-- ---------------------------------------------------------------------------------------------
-- taroc-plus: CO frames (section 5).

-- Reads a CO frame of CO kind byte `k` from `r` (after the kind byte and a CID prefix's octet):
-- `named` the CID its kind byte names (nil: 0, or an octet), `body` the context of an IR-R
-- frame whose CO body this is (nil for a CO frame), `tunnel` the tunnel frame it is in.
local function plus_co(r, pinfo, tree, dir, k, named, body, tunnel)
    if body == nil then
        local kt = tree:add(f.co_kind, k)
        kt:add(f.co_x, k)
        kt:add(f.co_p, k)
        kt:add(f.co_s, k)
        kt:add(f.co_a, k)
        kt:set_generated()
    end
    local sc, ac = math.floor(k / 4) % 4, k % 4
    local e = { short = nil }
    if bit32.band(k, 0x20) ~= 0 then
        local range = r:take(1)
        local x = range:uint()
        if x < 0x80 then
            local item = tree:add(f.ext_short, range)
            item:add(f.ext_short_w, range)
            item:add(f.ext_short_k, range)
            item:add(f.ext_short_v, range)
            e.w, e.k, e.short = bit32.band(x, 0x40) ~= 0, bit32.band(x, 0x20) ~= 0, x % 32
            if not (e.w or e.k) then malformed() end
        else
            local item = tree:add(f.ext_long, range)
            for _, b in ipairs({ f.ext_c, f.ext_w, f.ext_r, f.ext_u, f.ext_k, f.ext_f, f.ext_m }) do
                item:add(b, range)
            end
            e.c, e.w, e.r = bit32.band(x, 0x40) ~= 0, bit32.band(x, 0x20) ~= 0, bit32.band(x, 0x10) ~= 0
            e.u, e.k, e.f = bit32.band(x, 0x08) ~= 0, bit32.band(x, 0x04) ~= 0, bit32.band(x, 0x02) ~= 0
            local any = x % 128 > 1
            if bit32.band(x, 0x01) ~= 0 then
                local range2 = r:take(1)
                local y = range2:uint()
                local item2 = tree:add(f.ext2, range2)
                for _, b in ipairs({ f.ext2_q, f.ext2_z, f.ext2_o, f.ext2_n, f.ext2_v }) do item2:add(b, range2) end
                if y == 0 or y % 8 ~= 0 then malformed() end
                e.q, e.z = bit32.band(y, 0x80) ~= 0, bit32.band(y, 0x40) ~= 0
                e.o, e.n = bit32.band(y, 0x20) ~= 0, bit32.band(y, 0x10) ~= 0
                e.v = bit32.band(y, 0x08) ~= 0
                any = true
            end
            if not any then malformed() end
        end
    end
    -- The CID.
    local cid = 0
    if body ~= nil then
        if e.c then malformed() end
    elseif named ~= nil then
        if e.c then malformed() end
        cid = named
    elseif e.c then
        local range = r:take(1)
        cid = range:uint()
        if cid == 0 then malformed() end
        tree:add(f.cid, range)
    else
        add_generated(tree, f.cid, 0)
    end
    local ctx = body
    if ctx == nil then
        ctx = look("tcp", dir, cid)
        if ctx ~= nil and ctx.outer and tunnel ~= nil then malformed() end
    end
    -- A scaling note (section 5.3).
    local note
    if e.n then
        local range = r:take(1)
        local n = range:uint()
        local item = tree:add(f.note, range)
        item:add(f.note_k, range)
        item:add(f.note_t, range)
        item:add(f.note_b, range)
        if bit32.band(n, 0xCC) ~= 0 then malformed() end
        note = { behaviour = n % 4, seq_stride = 0, ack_stride = 0 }
        if bit32.band(n, 0x10) ~= 0 then
            local sr = r:take(2)
            local stride = sr:uint()
            item:add(f.note_stride, sr)
            if stride == 0 then malformed() end
            if bit32.band(n, 0x20) ~= 0 then note.ack_stride = stride else note.seq_stride = stride end
        elseif bit32.band(n, 0x20) ~= 0 then
            malformed()
        end
    end
    tree:add(f.co_checksum, r:take(2))
    if e.v then tree:add(f.co_check, r:take(2)) end
    if ctx == nil then
        tree:add_proto_expert_info(e_no_context, string.format(
            "No frame that set CID %d up is in the file: the rest cannot be read", cid))
        return cid, nil
    end
    local scaling = ctx
    if note ~= nil then
        if not ctx.v4 and note.behaviour ~= 2 then malformed() end
        scaling = with(ctx, note)
        if body == nil then store("tcp", dir, cid, scaling) end
    end
    add_generated(tree, f.ctx_seq_stride, scaling.seq_stride)
    add_generated(tree, f.ctx_ack_stride, scaling.ack_stride)
    add_generated(tree, f.ctx_ts, ctx.ts)
    local codes = CODES_UNSTRIDED
    if scaling.seq_stride ~= 0 then codes = CODES_STRIDED
    elseif scaling.ack_stride ~= 0 then codes = CODES_ACK end

    local rest = r:rest()
    local bits = bit_reader(rest)
    local bt = tree
    if rest ~= nil then bt = tree:add(f.bitfield, rest) end
    -- Sequence and acknowledgment numbers (section 5.2).
    local tcp_flags = 0x10
    for _, n in ipairs({ { "seq", sc, scaling.seq_stride, e.q, f.seq, f.seq_bits, f.seq_scale },
        { "ack", ac, scaling.ack_stride, e.z, f.ack, f.ack_bits, f.ack_scale } }) do
        local class, stride, unscaled = n[2], n[3], n[4]
        if unscaled and stride == 0 then
            bt:add_proto_expert_info(e_malformed, "Q or Z without a stride in the context")
        end
        local strided = stride ~= 0 and not unscaled
        local k_bits = strided and SCALED_BITS[class] or UNSCALED_BITS[class]
        local scaled = strided and class ~= 3
        local from = bits.pos
        local v = bits:get(k_bits)
        local item = add_bits(bt, n[5], bits, from, v,
            string.format(", class %d%s", class, scaled and (", of the number / " .. stride) or ""))
        item:add(n[6], k_bits):set_generated()
        item:add(n[7], scaled and stride or 0):set_generated()
    end
    -- IP-ID (section 5.4).
    local behaviour = scaling.behaviour
    add_generated(bt, f.ip_id_behaviour, behaviour)
    if behaviour == 0 or behaviour == 1 then
        local from = bits.pos
        local c = bits:prefix()
        local k_bits = codes.ip_id[c + 1]
        local v = bits:get(k_bits)
        local item = add_bits(bt, f.ip_id_lsbs, bits, from, v, code_text(c, k_bits))
        item:add(f.ip_id_code, c):set_generated()
        item:add(f.ip_id_bits, k_bits):set_generated()
    elseif behaviour == 3 then
        local from = bits.pos
        add_bits(bt, f.ip_id_random, bits, from, bits:get(16))
    end
    -- Timestamps (section 5.5).
    if ctx.ts then
        local from = bits.pos
        local c = bits:prefix()
        local k_bits = codes.ts[c + 1]
        local v = bits:get(k_bits)
        local item = add_bits(bt, f.p_ts_val, bits, from, v, code_text(c, k_bits))
        item:add(f.ts_val_code, c):set_generated()
        item:add(f.p_ts_val_bits, k_bits):set_generated()
        from = bits.pos
        c = bits:prefix()
        local gap, n = codes.ecr[c + 1][1], codes.ecr[c + 1][2]
        v = bits:get(n)
        item = add_bits(bt, gap and f.p_ts_gap or f.p_ts_ecr, bits, from, v, code_text(c, n))
        item:add(f.ts_ecr_code, c):set_generated()
        item:add(f.p_ts_ecr_bits, n):set_generated()
    end
    -- SACK header, window, SACK blocks (section 5.6).
    local sack_header
    if e.short ~= nil and not e.w then
        sack_header = e.short
    elseif e.k then
        local from = bits.pos
        sack_header = bits:get(5)
        add_bits(bt, f.sack_header, bits, from, sack_header)
    end
    if e.w then
        local from = bits.pos
        local v, k_bits
        if e.short ~= nil then
            if bit32.band(e.short, 0x10) ~= 0 then
                v, k_bits = e.short % 16 + bits:get(2) * 16, 6
            else
                v, k_bits = e.short % 16, 4
            end
        else
            k_bits = bits:get(1) == 0 and 8 or 16
            v = bits:get(k_bits)
        end
        local item = add_bits(bt, f.window, bits, from, v, e.short ~= nil and ", the 4 low ones in the extension's v" or "")
        item:add(f.window_bits, k_bits):set_generated()
    end
    if sack_header ~= nil then
        local count = math.floor(sack_header / 8) % 4 + 1
        local scaled = bit32.band(sack_header, 0x04) ~= 0
        local order = SACK_ORDERS[sack_header % 4]
        local st = bt:add(f.sack_count, count)
        st:set_generated()
        st:add(f.sack_scaled, scaled):set_generated()
        st:add(f.sack_order, order):set_generated()
        if scaled and scaling.ack_stride == 0 then malformed() end
        st:add(f.sack_stride, scaled and scaling.ack_stride or 1):set_generated()
        for _ = 1, count do
            local from = bits.pos
            add_bits(st, f.p_sack_offset, bits, from, bits:eg(order))
            from = bits.pos
            add_bits(st, f.p_sack_size, bits, from, bits:eg(order))
        end
    end
    -- The outer IPv4 Identification (section 8.1).
    local outer = body == nil and ctx.outer or false
    if outer and outer.v4 then
        local coded = e.o
        if not coded and (not outer.zero or bits.pos % 8 ~= 0) then
            local from = bits.pos
            local marker = bits:get(1)
            add_bits(bt, f.outer_marker, bits, from, marker, marker == 0 and ", the predicted value" or "")
            coded = marker == 1
        end
        if coded then
            local from = bits.pos
            local code = bits:get(1)
            add_bits(bt, f.outer_code, bits, from, code)
            from = bits.pos
            if code == 0 then
                add_bits(bt, f.outer_offset, bits, from, bits:get(8))
            else
                add_bits(bt, f.outer_whole, bits, from, bits:get(16))
            end
        end
    elseif e.o then
        malformed()
    end
    local padding = (8 - bits.pos % 8) % 8
    if padding > 0 then
        local from = bits.pos
        bits:get(padding)
        add_bits(bt, f.padding, bits, from, padding)
    end
    if rest ~= nil and bits.pos > 0 then
        bt:set_len(bits.pos / 8)
        bt:append_text(": " .. tostring(rest(0, bits.pos / 8):bytes()))
    end
    r.at = r.at + bits.pos / 8
    if e.r then
        local range = r:take(1)
        local item = tree:add(f.p_r_octet, range)
        item:add(f.r_reserved, range)
        item:add(f.r_cwr, range)
        item:add(f.r_ece, range)
        item:add(f.r_ecn, range)
        tcp_flags = tcp_flags + math.floor(range:uint() / 4) % 4 * 64
    end
    if e.u then
        tree:add(f.p_urgent, r:take(2))
        tcp_flags = tcp_flags + 0x20
    end
    if bit32.band(k, 0x10) ~= 0 then tcp_flags = tcp_flags + 0x08 end
    if e.f then tcp_flags = tcp_flags + 0x01 end
    add_generated(tree, f.tcp_flags, tcp_flags):append_text(tcp_flags_text(tcp_flags))
    add_generated(tree, f.data_len, r:left())
    payload(r, pinfo, tree)
    return cid, ctx
end

-- ---------------------------------------------------------------------------------------------
-- taroc-plus: IR frames (sections 3, 4, 8).

-- IR (0x08): the packet with | context flags | CID | in its length field (section 3).
local function plus_ir(tvb, pinfo, tree, subtree, dir, tunnel)
    if tvb:len() < 20 then malformed() end
    local v6 = tvb(0, 1):bitfield(0, 4) == 6
    local at = v6 and 4 or 2
    local flags = tvb(at, 1):uint()
    add_ctx_flags(subtree, tvb(at, 1), false)
    subtree:add(f.cid, tvb(at + 1, 1))
    local cid = tvb(at + 1, 1):uint()
    if flags >= 0x40 then malformed() end
    local restored_tvb = restored(tvb, at, nil, "IR packet")
    local p = packet_info(restored_tvb)
    if p.proto ~= 6 or p.sport == nil then malformed() end
    local ctx = { v4 = p.v4, ts = p.ts, seq_stride = 0, ack_stride = 0, behaviour = flags % 4,
        flow = p.flow, outer = outer_of(tunnel) }
    local urgent_at
    if bit32.band(flags, 0x10) ~= 0 then
        urgent_at = p.urgent_at
        local stride = tvb(urgent_at, 2):uint()
        subtree:add(f.stride, tvb(urgent_at, 2))
        if bit32.band(flags, 0x20) ~= 0 then ctx.ack_stride = stride else ctx.seq_stride = stride end
        restored_tvb = restored(tvb, at, urgent_at, "IR packet")
    elseif bit32.band(flags, 0x20) ~= 0 then
        malformed()
    end
    store("tcp", dir, cid, ctx)
    tell(dir, p.flow, p.checksum)
    ip_dissect(restored_tvb, pinfo, tree)
    return cid
end

-- The option holes of a compact frame's layout (section 3.1): the TS value and echo (layout 1),
-- or Linux's SYN options (layouts 2 and 3; a SYN without ACK sends no TS echo).
local function compact_holes(r, tree, layout, ack)
    if layout == 1 then
        tree:add(f.h_ts_val, r:take(4))
        tree:add(f.h_ts_ecr, r:take(4))
    elseif layout == 2 then
        tree:add(f.h_mss, r:take(2))
        tree:add(f.h_ts_val, r:take(4))
        if ack then tree:add(f.h_ts_ecr, r:take(4)) else add_generated(tree, f.h_ts_ecr, 0) end
        tree:add(f.h_wscale, r:take(1))
    elseif layout == 3 then
        tree:add(f.h_mss, r:take(2))
        tree:add(f.h_wscale, r:take(1))
    end
end

local COMPACT_LAYOUT_LEN = { [0] = 0, 12, 20, 12 }

-- Compact IR (0x0E, `syn` false) and compact SYN (0x0F, `syn` true): sections 3.1-3.4. `packed`
-- the packed IR's octet (section 3.5), which stands for the short form's shape, CID and flags.
local function plus_compact(r, pinfo, tree, dir, syn, tunnel, packed)
    local shape, flags, cid, short, mirrored, numbered
    local ref_checksum, mirror
    local psh
    if packed ~= nil then
        local range = r:take(1)
        local b = range:uint()
        local item = tree:add(f.packed, range)
        item:add(f.packed_k, range)
        item:add(f.packed_t, range)
        item:add(f.packed_p, range)
        item:add(f.packed_cid, range)
        cid = b % 32
        add_generated(tree, f.cid, cid)
        flags = math.floor(b / 64) * 16 -- K T, as the context flags' 0x20 0x10
        psh = bit32.band(b, 0x20) ~= 0
        short, mirrored, numbered = true, true, true
        shape = 0x04
    else
        local range = r:take(1)
        shape = range:uint()
        short = not syn and bit32.band(shape, 0x0C) == 0x0C
        if short then
            local item = tree:add(f.short, range)
            item:add(f.short_k, range)
            item:add(f.short_t, range)
            item:add(f.short_ecn, range)
            item:add(f.short_o, range)
            item:add(f.short_b, range)
            flags = bit32.band(math.floor(shape / 4), 0x3C) + shape % 4
            shape = 0x04
            mirrored, numbered = true, true
            local cr = r:take(1)
            tree:add(f.cid, cr)
            cid = cr:uint()
        else
            local item = tree:add(f.shape, range)
            for _, b in ipairs({ f.shape_v, f.shape_t, f.shape_s, f.shape_d, f.shape_o, f.shape_u, f.shape_z }) do
                item:add(b, range)
            end
            if not syn then
                local fr = r:take(1)
                flags = fr:uint()
                add_ctx_flags(tree, fr, true)
                local cr = r:take(1)
                tree:add(f.cid, cr)
                cid = cr:uint()
                mirrored, numbered = flags >= 0x80, bit32.band(flags, 0x40) ~= 0
                if numbered and not mirrored then malformed() end
                flags = flags % 64
                if mirrored then
                    local hr = r:take(2)
                    tree:add(f.mirror_hash, hr)
                    mirror = mirror_by_hash(dir, hr:uint())
                end
            end
        end
    end
    -- The short form's T (and a packed IR's): the usual stride, in the urgent pointer field.
    if short and bit32.band(flags, 0x10) ~= 0 then shape = shape + 0x02 end
    if numbered then
        local cr = r:take(2)
        tree:add(f.ref_checksum, cr)
        ref_checksum = cr:uint()
        if short then
            local m = mirror_by_checksum(dir, ref_checksum)
            if m then mirror = m end
        end
    end
    local v4 = bit32.band(shape, 0x80) == 0
    local layout = math.floor(shape / 4) % 4
    if short then layout = 1 end
    if numbered and layout > 1 then malformed() end
    if not v4 and bit32.band(shape, 0x11) ~= 0 then malformed() end
    if mirror then
        local mt = tree:add(f.mirror_flow, flow_text(mirror))
        mt:set_generated()
        if mirror.v4 ~= v4 then malformed() end
    end
    if bit32.band(shape, 0x20) ~= 0 then
        if v4 then
            tree:add(f.h_tos, r:take(1))
        else
            local fr = r:take(4)
            tree:add(f.h_first, fr)
            if fr:bitfield(0, 4) ~= 6 then malformed() end
        end
    end
    if bit32.band(shape, 0x40) ~= 0 then tree:add(f.h_ttl, r:take(1)) else add_generated(tree, f.h_ttl, 64) end
    if v4 then
        if bit32.band(shape, 0x01) ~= 0 then add_generated(tree, f.h_ip_id, 0) else tree:add(f.h_ip_id, r:take(2)) end
    end
    local flow
    if not mirrored then
        local n = v4 and 4 or 16
        local sr, dr = r:take(n), r:take(n)
        tree:add(v4 and f.h_src4 or f.h_src6, sr)
        tree:add(v4 and f.h_dst4 or f.h_dst6, dr)
        local pr, qr = r:take(2), r:take(2)
        tree:add(f.h_sport, pr)
        tree:add(f.h_dport, qr)
        flow = { v4 = v4, src = sr:raw(), dst = dr:raw(), sport = pr:uint(), dport = qr:uint() }
    elseif mirror then
        flow = reversed(mirror)
        add_generated(tree, f.h_sport, flow.sport)
        add_generated(tree, f.h_dport, flow.dport)
    end
    local tcp_flags, checksum
    if numbered then
        local v, range = r:signed()
        tree:add(f.d_seq, range, v)
        v, range = r:signed()
        tree:add(f.d_ack, range, v)
        if packed ~= nil then
            tcp_flags = psh and 0x18 or 0x10
            add_generated(tree, f.h_flags, tcp_flags):append_text(tcp_flags_text(tcp_flags))
        else
            local fr = r:take(1)
            tcp_flags = fr:uint()
            tree:add(f.h_flags, fr):append_text(tcp_flags_text(tcp_flags))
        end
        v, range = r:signed()
        tree:add(f.d_window, range, v)
        local cr = r:take(2)
        checksum = cr:uint()
        tree:add(f.h_checksum, cr):append_text(" (XOR the flow's hash and the numbers' seal)")
    elseif syn then
        local fr = r:take(1)
        tcp_flags = fr:uint()
        tree:add(f.h_flags, fr):append_text(tcp_flags_text(tcp_flags))
        tree:add(f.h_seq, r:take(4))
        if bit32.band(tcp_flags, 0x10) ~= 0 then tree:add(f.h_ack, r:take(4)) else add_generated(tree, f.h_ack, 0) end
        tree:add(f.h_window, r:take(2))
        local cr = r:take(2)
        checksum = cr:uint()
        tree:add(f.h_checksum, cr)
    else
        tree:add(f.h_seq, r:take(4))
        tree:add(f.h_ack, r:take(4))
        local fr = r:take(1)
        tcp_flags = fr:uint()
        tree:add(f.h_flags, fr):append_text(tcp_flags_text(tcp_flags))
        tree:add(f.h_window, r:take(2))
        local cr = r:take(2)
        checksum = cr:uint()
        local item = tree:add(f.h_checksum, cr)
        if mirrored then item:append_text(" (XOR the flow's hash)") end
    end
    add_generated(tree, f.h_offset, 20 + COMPACT_LAYOUT_LEN[layout])
    local stride = 0
    if bit32.band(shape, 0x02) ~= 0 then
        if numbered then
            local usual = 1500 - (v4 and 20 or 40) - 20 - COMPACT_LAYOUT_LEN[layout]
            local d = 0
            if not short then
                local v, range = r:signed()
                tree:add(f.d_stride, range, v)
                d = v
            end
            stride = (usual + d) % 65536
            add_generated(tree, f.h_urgent, stride)
        else
            local ur = r:take(2)
            tree:add(f.h_urgent, ur)
            stride = ur:uint()
        end
    end
    if numbered and layout == 1 then
        local v, range = r:signed()
        tree:add(f.d_ts_val, range, v)
        v, range = r:signed()
        tree:add(f.d_ts_ecr, range, v)
    else
        compact_holes(r, tree, layout, bit32.band(tcp_flags, 0x10) ~= 0)
    end
    add_generated(tree, f.data_len, r:left())
    payload(r, pinfo, tree)
    if flow ~= nil and mirrored then checksum = bit32.bxor(checksum, flow_hash(flow)) end
    -- With numbers, the field is XORed with their seal too, which needs the reference's numbers.
    if flow == nil or numbered then checksum = nil end
    if syn then
        tell(dir, flow, checksum)
        return nil
    end
    local ctx = { v4 = v4, ts = layout == 1, seq_stride = 0, ack_stride = 0, behaviour = flags % 4,
        flow = flow or false, outer = false }
    if bit32.band(flags, 0x10) ~= 0 then
        if bit32.band(flags, 0x20) ~= 0 then ctx.ack_stride = stride else ctx.seq_stride = stride end
    elseif bit32.band(flags, 0x20) ~= 0 then
        malformed()
    end
    ctx.outer = outer_of(tunnel)
    store("tcp", dir, cid, ctx)
    if flow then tell(dir, flow, checksum) else store("misc", 0, "v4", v4) end
    return cid
end

-- Ports against a base's (section 4.2): `mode` 0 both whole, 1 source kept, 2 destination kept.
local function plus_ports(r, tree, mode, base_flow)
    if mode == 0 then
        local pr, qr = r:take(2), r:take(2)
        tree:add(f.h_sport, pr)
        tree:add(f.h_dport, qr)
        return pr:uint(), qr:uint()
    end
    local z, range = r:leb()
    if z >= 65536 then malformed() end
    local d = (z % 2 == 0) and z / 2 or -(z + 1) / 2
    tree:add(f.port_diff, range, d)
    if not base_flow then return nil, nil end
    local sport, dport = base_flow.sport, base_flow.dport
    if mode == 1 then
        dport = (dport + d) % 65536
        add_generated(tree, f.h_sport, sport)
        add_generated(tree, f.h_dport, dport)
    else
        sport = (sport + d) % 65536
        add_generated(tree, f.h_sport, sport)
        add_generated(tree, f.h_dport, dport)
    end
    return sport, dport
end

-- IR-R (0x09, 0x0C, 0x0D): section 4.
local function plus_ir_r(r, pinfo, tree, dir, kind, tunnel)
    local fr = r:take(1)
    local flags = fr:uint()
    local item = tree:add(f.irr_flags, fr)
    for _, b in ipairs({ f.irr_s, f.irr_i, f.irr_h, f.irr_t, f.irr_ecn, f.irr_b }) do item:add(b, fr) end
    local cr = r:take(1)
    tree:add(f.cid, cr)
    local cid = cr:uint()
    local br = r:take(1)
    tree:add(f.base_cid, br)
    local base_cid = br:uint()
    if base_cid == cid then malformed() end
    if flags >= 0x80 and bit32.band(flags, 0x10) ~= 0 then malformed() end
    local base = look("tcp", dir, base_cid)
    local ctx = { ts = bit32.band(flags, 0x20) ~= 0, seq_stride = 0, ack_stride = 0,
        behaviour = flags % 4, outer = outer_of(tunnel), flow = false }
    if flags >= 0x80 then
        if base then ctx.seq_stride, ctx.ack_stride = base.seq_stride, base.ack_stride end
    elseif bit32.band(flags, 0x10) ~= 0 then
        local s, a = r:take(2), r:take(2)
        tree:add(f.seq_stride, s)
        tree:add(f.ack_stride, a)
        ctx.seq_stride, ctx.ack_stride = s:uint(), a:uint()
    end
    if bit32.band(flags, 0x40) == 0 then
        local ip = r:take(6)
        tree:add(f.ip_bytes, ip)
        ctx.v4 = ip(0, 1):uint() == 0x45
        if not ctx.v4 and ip(0, 1):bitfield(0, 4) ~= 6 then malformed() end
    elseif base then
        ctx.v4 = base.v4
    else
        ctx.v4 = last_v4()
    end
    if not base then
        tree:add_proto_expert_info(e_no_context, string.format(
            "No frame that set the base CID %d up is in the file", base_cid))
    end
    local mode = (kind == 0x0C and 1) or (kind == 0x0D and 2) or 0
    local sport, dport = plus_ports(r, tree, mode, base and base.flow)
    if base and base.flow and sport ~= nil then
        ctx.flow = { v4 = base.flow.v4, src = base.flow.src, dst = base.flow.dst, sport = sport, dport = dport }
    end
    local kr = r:take(1)
    local k = kr:uint()
    if k < 0x40 or k > 0x7f then malformed() end
    local body = tree:add(f.co_kind, kr)
    body:add(f.co_x, kr)
    body:add(f.co_p, kr)
    body:add(f.co_s, kr)
    body:add(f.co_a, kr)
    plus_co(r, pinfo, body, dir, k, nil, ctx, tunnel)
    store("tcp", dir, cid, ctx)
    tell(dir, ctx.flow, nil)
    return cid
end

-- IR-S (0x0B): section 4.1.
local IRS_LAYOUT_LEN = { [0] = 0, 20, 12 }
local function plus_ir_s(r, pinfo, tree, dir)
    local first = r:take(1)
    local sr = r:take(1)
    local shape = sr:uint()
    local item = tree:add(f.irs_shape, sr)
    for _, b in ipairs({ f.irs_i, f.irs_p, f.irs_q, f.irs_m, f.irs_x, f.irs_code }) do item:add(b, sr) end
    local mirrored = bit32.band(shape, 0x10) ~= 0
    if bit32.band(shape, 0x60) == 0x60 then malformed() end
    local ext = 0
    if bit32.band(shape, 0x08) ~= 0 then
        local er = r:take(1)
        ext = er:uint()
        local ei = tree:add(f.irs_ext, er)
        for _, b in ipairs({ f.irs_z, f.irs_n, f.irs_s, f.irs_r, f.irs_w, f.irs_ff }) do ei:add(b, er) end
        if ext == 0 or ext % 2 ~= 0 then malformed() end
    end
    local code = shape % 8
    if bit32.band(ext, 0x20) ~= 0 and code == 0 then malformed() end
    local numbered, named = bit32.band(ext, 0x40) ~= 0, bit32.band(ext, 0x10) ~= 0
    if named and not numbered then malformed() end
    if numbered and not mirrored then malformed() end
    local base_flow, v4, template_v4
    if mirrored then
        local low = r:take(1)
        local value = first:uint() * 256 + low:uint()
        local m
        if named then
            tree:add(f.ref_checksum, first, value):append_text(" (its high octet first, its low one here)")
            m = mirror_by_checksum(dir, value)
        else
            tree:add(f.mirror_hash, first, value):append_text(" (its high octet first, its low one here)")
            m = mirror_by_hash(dir, value)
        end
        if m then
            tree:add(f.mirror_flow, flow_text(m)):set_generated()
            base_flow = reversed(m)
            template_v4 = m.v4
        end
        if numbered and not named then tree:add(f.ref_checksum, r:take(2)) end
    else
        tree:add(f.base_cid, first)
        local base = look("tcp", dir, first:uint())
        if base then
            template_v4 = base.v4
            base_flow = base.flow
        else
            tree:add_proto_expert_info(e_no_context, string.format(
                "No frame that set the base CID %d up is in the file", first:uint()))
        end
    end
    if bit32.band(shape, 0x80) == 0 then
        local ip = r:take(6)
        tree:add(f.ip_bytes, ip)
        local b0 = ip(0, 1):uint()
        v4 = b0 == 0x45
        if not v4 and math.floor(b0 / 16) ~= 6 then malformed() end
    end
    if v4 == nil then v4 = template_v4 end
    if v4 == nil then
        v4 = last_v4()
        tree:add_proto_expert_info(e_guess)
    end
    if v4 then
        if bit32.band(ext, 0x80) ~= 0 then add_generated(tree, f.h_ip_id, 0) else tree:add(f.h_ip_id, r:take(2)) end
    elseif bit32.band(ext, 0x80) ~= 0 then
        malformed()
    end
    local mode = 0
    if bit32.band(shape, 0x40) ~= 0 then mode = 1 elseif bit32.band(shape, 0x20) ~= 0 then mode = 2 end
    local sport, dport = plus_ports(r, tree, mode, base_flow)
    tree:add(f.h_seq, r:take(4))
    local fcode = math.floor(ext / 2) % 4
    local offset, tcp_flags
    if fcode == 0 then
        local or_ = r:take(1)
        offset = or_:bitfield(0, 4) * 4
        tree:add(f.h_offset, or_, offset)
        local fl = r:take(1)
        tcp_flags = fl:uint()
        tree:add(f.h_flags, fl):append_text(tcp_flags_text(tcp_flags))
    else
        if code > 2 then malformed() end
        offset = 20 + IRS_LAYOUT_LEN[code]
        tcp_flags = ({ 0x02, 0x12, 0x04 })[fcode]
        add_generated(tree, f.h_offset, offset)
        add_generated(tree, f.h_flags, tcp_flags):append_text(tcp_flags_text(tcp_flags))
    end
    local ack = bit32.band(tcp_flags, 0x10) ~= 0
    if numbered then
        if not ack then malformed() end
        local v, range = r:signed()
        tree:add(f.d_ack, range, v)
    elseif ack then
        tree:add(f.h_ack, r:take(4))
    else
        add_generated(tree, f.h_ack, 0)
    end
    local mss = v4 and 1460 or 1440
    if bit32.band(ext, 0x08) ~= 0 then
        local window = 0
        if bit32.band(tcp_flags, 0x04) == 0 then
            local size = mss - ((ack and code == 1) and 12 or 0)
            window = 65535 - 65535 % size
        end
        add_generated(tree, f.h_window, window):append_text(" (the usual one)")
    else
        tree:add(f.h_window, r:take(2))
    end
    tree:add(f.h_checksum, r:take(2)):append_text(" (XOR the seal)")
    if bit32.band(tcp_flags, 0x20) ~= 0 then tree:add(f.h_urgent, r:take(2)) end
    if offset < 20 then malformed() end
    if code == 0 then
        if offset > 20 then tree:add(f.h_options, r:take(offset - 20)) end
    else
        if code > 2 or IRS_LAYOUT_LEN[code] ~= offset - 20 then malformed() end
        if bit32.band(ext, 0x20) ~= 0 then
            add_generated(tree, f.h_mss, mss):append_text(" (the usual one)")
        else
            tree:add(f.h_mss, r:take(2))
        end
        if code == 1 then
            tree:add(f.h_ts_val, r:take(4))
            if ack and numbered then
                local v, range = r:signed()
                tree:add(f.d_ts_ecr, range, v)
            elseif ack then
                tree:add(f.h_ts_ecr, r:take(4))
            else
                add_generated(tree, f.h_ts_ecr, 0)
            end
        end
        tree:add(f.h_wscale, r:take(1))
    end
    add_generated(tree, f.data_len, r:left())
    payload(r, pinfo, tree)
    if base_flow and sport ~= nil then
        tell(dir, { v4 = base_flow.v4, src = base_flow.src, dst = base_flow.dst, sport = sport, dport = dport }, nil)
    end
end

-- The shape of a non-TCP context (section 8): whether it has a sequence number, an IP-ID of
-- its own, a transport checksum; its mode's name.
local function has_seq(ctx) return ctx.rtp or ctx.echo or ctx.v4 end
local function own_ip_id(ctx) return ctx.v4 and (ctx.rtp or ctx.echo) end
local function has_checksum(ctx) return ctx.udp or ctx.echo end
-- The key of an IPv4 context's pair (section 8): its addresses and protocol, from its template.
local function pair_key(ctx)
    if not ctx.v4 or not ctx.template then return nil end
    return ctx.template:sub(13, 20) .. ctx.template:sub(10, 10)
end
-- Whether a CO-S or CO-I frame's sequence LSBs mean one to four on (section 8): in RTP and echo
-- mode, whose sequence numbers only grow.
local function seq_grows(ctx) return ctx.rtp or ctx.echo end
local function mode_text(ctx)
    if ctx.rtp then return "RTP" end
    if ctx.udp then return "UDP" end
    if ctx.echo then return "echo" end
    return "IP only"
end

-- The IR-N flags of a context's shape (mode bits, no step).
local function shape_flags(ctx)
    if ctx.rtp then return 0x05 end
    if ctx.udp then return 0x01 end
    if ctx.echo then return 0x02 end
    return 0
end

-- Where a context's IP header ends, its header (what its template and the check cover) ends
-- and its transport checksum is (nil: none).
local function header_layout(ctx)
    local ip = ctx.v4 and 20 or 40
    local header = ip + ((ctx.udp or ctx.echo) and 8 or 0) + (ctx.rtp and 12 or 0)
    local at
    if ctx.udp then at = ip + 6 elseif ctx.echo then at = ip + 2 end
    return ip, header, at
end

-- Headers as tables of octets indexed from 0.
local function octets_of(raw)
    local t = {}
    for i = 1, #raw do t[i - 1] = raw:byte(i) end
    return t
end
local function raw_of(t, n)
    local parts = {}
    for i = 0, n - 1 do parts[#parts + 1] = string.char(t[i]) end
    return table.concat(parts)
end
local function put16(t, at, v)
    t[at], t[at + 1] = math.floor(v / 256) % 256, v % 256
end
local function put32(t, at, v)
    put16(t, at, math.floor(v / 65536) % 65536)
    put16(t, at + 2, v % 65536)
end

-- One's-complement arithmetic: `acc` plus the big-endian words of `t` from `from` to `to`
-- (exclusive); of a string (an odd one padded with a zero octet); folded to 16 bits.
local function sum_words(acc, t, from, to)
    for i = from, to - 1, 2 do acc = acc + t[i] * 256 + t[i + 1] end
    return acc
end
local function sum_raw(acc, raw)
    local n = #raw
    for i = 1, n - 1, 2 do acc = acc + raw:byte(i) * 256 + raw:byte(i + 1) end
    if n % 2 == 1 then acc = acc + raw:byte(n) * 256 end
    return acc
end
local function fold(acc)
    while acc > 0xFFFF do acc = acc % 65536 + math.floor(acc / 65536) end
    return acc
end

-- a * b modulo 2^32, for a and b below 2^32 (exact in doubles: each partial product is below 2^53).
local function mul32(a, b)
    local a_lo, a_hi = a % 65536, math.floor(a / 65536)
    return (a_lo * b + ((a_hi * (b % 65536)) % 65536) * 65536) % 4294967296
end

-- The check of the first `n` octets of `t` (section 8): FNV-1a (32 bits) of the octets through
-- MurmurHash3's finaliser, the high 16 bits.
local function crc16(t, n)
    local h = 0x811C9DC5
    for i = 0, n - 1 do
        h = mul32(bit32.bxor(h, t[i]), 0x01000193)
    end
    h = bit32.bxor(h, bit32.rshift(h, 16))
    h = mul32(h, 0x85EBCA6B)
    h = bit32.bxor(h, bit32.rshift(h, 13))
    h = mul32(h, 0xC2B2AE35)
    h = bit32.bxor(h, bit32.rshift(h, 16))
    return bit32.rshift(h, 16)
end

-- Zeroes the per-packet fields of the header `t` of a context of shape `ctx` (section 8): the
-- lengths, the IPv4 Identification, header checksum and fragment field, the UDP length, the echo
-- sequence number and checksum, the RTP marker, sequence number and timestamp; a nonzero UDP
-- checksum becomes 0xFFFF.
local function zero_per_packet(t, ctx)
    local ip = header_layout(ctx)
    if ctx.v4 then
        for i = 2, 7 do t[i] = 0 end
        t[10], t[11] = 0, 0
    else
        t[4], t[5] = 0, 0
    end
    if ctx.udp then
        t[ip + 4], t[ip + 5] = 0, 0
        local v = (t[ip + 6] == 0 and t[ip + 7] == 0) and 0 or 0xFF
        t[ip + 6], t[ip + 7] = v, v
    end
    if ctx.rtp then
        local r = ip + 8
        t[r + 1] = t[r + 1] % 128
        for i = r + 2, r + 7 do t[i] = 0 end
    end
    if ctx.echo then
        t[ip + 2], t[ip + 3], t[ip + 6], t[ip + 7] = 0, 0, 0, 0
    end
end

-- The transport checksum of the header `t` of a context of shape `ctx` (its checksum field
-- skipped) and the payload `raw`, as the sender computes it: UDP's and ICMPv6's over the
-- pseudo-header (UDP's 0 sent as 0xFFFF), ICMP's over the message.
local function transport_checksum(t, ctx, raw)
    local ip, header, at = header_layout(ctx)
    local acc = 0
    if ctx.udp or not ctx.v4 then
        if ctx.v4 then acc = sum_words(acc, t, 12, 20) else acc = sum_words(acc, t, 8, 40) end
        acc = acc + (ctx.udp and 17 or 58) + header - ip + #raw
    end
    acc = sum_words(acc, t, ip, at)
    acc = sum_words(acc, t, at + 2, header)
    local sum = 0xFFFF - fold(sum_raw(acc, raw))
    if ctx.udp and sum == 0 then sum = 0xFFFF end
    return sum
end

-- IR-N (0x0A): the packet with | flags | CID | in its length field (section 8); in RTP mode
-- the UDP Length field carries the stride. A first octet below 0x10: a replicated IR-N.
local plus_ir_n_replica
local function plus_ir_n(tvb, pinfo, tree, subtree, dir)
    if tvb:len() >= 1 and tvb(0, 1):uint() < 0x10 then
        return plus_ir_n_replica(tvb, pinfo, tree, subtree, dir)
    end
    if tvb:len() < 20 then malformed() end
    local v6 = tvb(0, 1):bitfield(0, 4) == 6
    local at = v6 and 4 or 2
    local flags = tvb(at, 1):uint()
    local item = subtree:add(f.n_flags, tvb(at, 1))
    item:add(f.n_udp, tvb(at, 1))
    item:add(f.n_echo, tvb(at, 1))
    item:add(f.n_rtp_mode, tvb(at, 1))
    item:add(f.n_step, tvb(at, 1))
    item:add(f.n_frame, tvb(at, 1))
    subtree:add(f.cid, tvb(at + 1, 1))
    local udp, echo = bit32.band(flags, 0x01) ~= 0, bit32.band(flags, 0x02) ~= 0
    local rtp, step = bit32.band(flags, 0x04) ~= 0, bit32.band(flags, 0x08) ~= 0
    local frame = bit32.band(flags, 0x10) ~= 0
    local pair = bit32.band(flags, 0x20) ~= 0
    if flags >= 0x40 or (udp and echo) or (rtp and not udp) or (frame and not rtp) then malformed() end
    local rt = restored(tvb, at, nil, "IR-N packet")
    local p = packet_info(rt)
    if (step and not (p.v4 and (rtp or echo))) or (pair and not (p.v4 and rtp)) then malformed() end
    local t = p.header
    local need = t + (udp and 8 or 0) + (echo and 8 or 0) + (rtp and 12 or 0)
    if rt:len() < need then malformed() end
    local ctx = { v4 = p.v4, udp = udp, echo = echo, rtp = rtp, step = step, stride = 0,
        frame = frame, pair = pair, ip_id = p.ip_id, frag = p.frag, seq = 0 }
    add_generated(subtree, f.n_mode, mode_text(ctx))
    if rtp then
        -- The stride in the UDP Length field; the length restored from the frame's.
        subtree:add(f.n_stride, tvb(t + 4, 2))
        ctx.stride = tvb(t + 4, 2):uint()
        local bytes = rt:bytes()
        local length = rt:len() - t
        bytes:set_index(t + 4, math.floor(length / 256) % 256)
        bytes:set_index(t + 5, length % 256)
        rt = bytes:tvb("IR-N packet")
        ctx.seq = rt(t + 10, 2):uint()
    elseif echo then
        ctx.seq = rt(t + 6, 2):uint()
    elseif p.v4 then
        ctx.seq = p.ip_id
    end
    if has_seq(ctx) then add_generated(subtree, f.n_seq, ctx.seq) end
    if p.v4 then
        ctx.outer = p.header == 20 and (p.proto == 4 or p.proto == 41)
    else
        ctx.outer = p.next == 4 or p.next == 41
    end
    -- The template, which a replicated IR-N naming this context as its base starts from.
    local _, header = header_layout(ctx)
    local template = octets_of(rt:raw(0, header))
    zero_per_packet(template, ctx)
    ctx.template = raw_of(template, header)
    store("other", dir, tvb(at + 1, 1):uint(), ctx)
    if p.v4 then store("pair", dir, pair_key(ctx), p.ip_id) end
    store("misc", 0, "v4", p.v4)
    ip_dissect(rt, pinfo, tree)
end

-- Replicated IR-N (0x0A, first octet below 0x10): a new context's template is its base's with
-- the frame's words changed; the per-packet fields whole (section 8):
--   | form 0000KFM0 | IR-N flags | CID | base CID | n | n x (word index, word) | IP-ID (IPv4) |
--   | flags and fragment offset (F) | sequence number (RTP, echo) | timestamp, stride (RTP) |
--   | check | transport checksum (K) | payload |
-- The packet is rebuilt as the decompressor rebuilds it (lengths, IPv4 header checksum, the
-- transport checksum carried, 0 or computed over the payload), checked against the check and
-- handed to the IP dissector.
plus_ir_n_replica = function(tvb, pinfo, tree, subtree, dir)
    local r = reader(tvb, 0)
    local fr = r:take(1)
    local form = fr:uint()
    local item = subtree:add(f.n_form, fr)
    item:add(f.n_form_k, fr)
    item:add(f.n_form_f, fr)
    item:add(f.n_form_m, fr)
    if bit32.band(form, 0xF1) ~= 0 then malformed() end
    local flr = r:take(1)
    local flags = flr:uint()
    item = subtree:add(f.n_flags, flr)
    item:add(f.n_udp, flr)
    item:add(f.n_echo, flr)
    item:add(f.n_rtp_mode, flr)
    item:add(f.n_step, flr)
    item:add(f.n_frame, flr)
    local cr = r:take(1)
    local cid = cr:uint()
    subtree:add(f.cid, cr)
    local br = r:take(1)
    local base_cid = br:uint()
    subtree:add(f.base_cid, br)
    local nr = r:take(1)
    local n = nr:uint()
    subtree:add(f.n_changes, nr)
    if n > 8 then malformed() end
    local changes = {}
    for i = 1, n do
        local c = r:take(3)
        local it = subtree:add(f.n_change, c)
        it:add(f.n_word_index, c(0, 1))
        it:add(f.n_word, c(1, 2))
        changes[i] = { c(0, 1):uint(), c(1, 2):uint() }
    end
    local base = look("other", dir, base_cid)
    if not base or not base.template then
        subtree:add_proto_expert_info(e_no_context, string.format(
            "No IR-N of non-TCP CID %d (the base) is in the file: the rest cannot be read", base_cid))
        return cid
    end
    local ip, header, at = header_layout(base)
    local step = bit32.band(flags, 0x08) ~= 0
    local frame = bit32.band(flags, 0x10) ~= 0
    local pair = bit32.band(flags, 0x20) ~= 0
    local bad = bit32.band(flags, 0xC7) ~= shape_flags(base)
        or (step and not own_ip_id(base))
        or (pair and not (base.v4 and base.rtp))
        or (frame and not base.rtp)
        or (bit32.band(form, 0x04) ~= 0 and not base.v4)
        or (bit32.band(form, 0x02) ~= 0 and not base.rtp)
        or (bit32.band(form, 0x08) ~= 0 and at == nil)
    for _, c in ipairs(changes) do
        if 2 * c[1] + 2 > header then bad = true end
    end
    if bad then malformed() end
    local ctx = { v4 = base.v4, udp = base.udp, echo = base.echo, rtp = base.rtp, step = step,
        stride = 0, frame = frame, pair = pair, ip_id = 0, frag = base.frag, seq = 0 }
    add_generated(subtree, f.n_mode, mode_text(ctx))
    -- The template: the base's with the words changed.
    local t = octets_of(base.template)
    for _, c in ipairs(changes) do put16(t, 2 * c[1], c[2]) end
    local template = raw_of(t, header)
    local zero_sum = ctx.udp and t[ip + 6] == 0 and t[ip + 7] == 0
    -- The per-packet fields.
    if ctx.v4 then
        local idr = r:take(2)
        subtree:add(f.n_ip_id_value, idr)
        ctx.ip_id = idr:uint()
        ctx.seq = ctx.ip_id
    end
    if bit32.band(form, 0x04) ~= 0 then
        local fgr = r:take(2)
        subtree:add(f.n_frag, fgr)
        ctx.frag = fgr:uint()
    elseif ctx.v4 then
        add_generated(subtree, f.n_frag, ctx.frag):append_text(" (the base's)")
    end
    if ctx.rtp or ctx.echo then
        local sr = r:take(2)
        subtree:add(f.n_seq, sr)
        ctx.seq = sr:uint()
    elseif has_seq(ctx) then
        add_generated(subtree, f.n_seq, ctx.seq)
    end
    local ts, marker = 0, bit32.band(form, 0x02) ~= 0
    if ctx.rtp then
        local tr = r:take(4)
        subtree:add(f.n_rtp_ts, tr)
        ts = tr:uint()
        add_generated(subtree, f.n_marker, marker)
        local sr = r:take(2)
        subtree:add(f.n_stride, sr)
        ctx.stride = sr:uint()
    end
    local crc_range = r:take(2)
    subtree:add(f.n_crc, crc_range)
    local carried
    if bit32.band(form, 0x08) ~= 0 then
        local kr = r:take(2)
        subtree:add(f.n_checksum, kr)
        carried = kr:uint()
    elseif at ~= nil then
        add_generated(subtree, f.n_checksum_computed, true)
    end
    local raw = ""
    if r:left() > 0 then raw = tvb:raw(r.at, r:left()) end
    add_generated(subtree, f.n_payload, #raw)
    -- The packet, as the decompressor rebuilds it.
    local total = header + #raw
    if total > 65535 then malformed() end
    if ctx.v4 then
        put16(t, 4, ctx.ip_id)
        put16(t, 6, ctx.frag)
        put16(t, 2, total)
        put16(t, 10, 0)
        put16(t, 10, 0xFFFF - fold(sum_words(0, t, 0, 20)))
    else
        put16(t, 4, total - 40)
    end
    if ctx.udp then put16(t, ip + 4, total - ip) end
    if ctx.rtp then
        t[ip + 9] = t[ip + 9] % 128 + (marker and 128 or 0)
        put16(t, ip + 10, ctx.seq)
        put32(t, ip + 12, ts)
    elseif ctx.echo then
        put16(t, ip + 6, ctx.seq)
    end
    if at ~= nil then
        if carried ~= nil then
            put16(t, at, carried)
        elseif zero_sum then
            put16(t, at, 0)
        else
            put16(t, at, transport_checksum(t, ctx, raw))
        end
    end
    local rebuilt = raw_of(t, header)
    local packet = ByteArray.new(rebuilt .. raw, true):tvb("Replicated IR-N packet")
    subtree:add(f.n_header, packet(0, header)):set_generated()
    local ok = crc16(t, header) == crc_range:uint()
    add_generated(subtree, f.n_crc_ok, ok)
    if not ok then subtree:add_proto_expert_info(e_crc) end
    -- The decompressor delivers only a packet whose own template is the one the frame built.
    local check = octets_of(rebuilt)
    zero_per_packet(check, ctx)
    if raw_of(check, header) ~= template then malformed() end
    local next_header = ctx.v4 and t[9] or t[6]
    ctx.outer = next_header == 4 or next_header == 41
    ctx.template = template
    store("other", dir, cid, ctx)
    if ctx.v4 then store("pair", dir, pair_key(ctx), ctx.ip_id) end
    store("misc", 0, "v4", ctx.v4)
    ip_dissect(packet, pinfo, tree)
    return cid
end

-- The value with the LSBs `v` (`bits` of them) in [r - below, r + 2^bits - 1 - below] (mod 2^16).
local function lsb_decode(r, v, bits, below)
    local low = (r - below) % 65536
    return (low + (v - low) % 2 ^ bits) % 65536
end

-- The CID and sequence LSBs of a CO-S kind byte (0x10-0x15, 0x17-0x1C), or nil.
local function short_of(k)
    local i
    if k >= 0x10 and k <= 0x15 then
        i = k - 0x10
    elseif k >= 0x17 and k <= 0x1C then
        i = k - 0x11
    else
        return nil
    end
    return math.floor(i / 4), i % 4
end

-- Adds transmitted LSBs `value` (`bits` of them) of a field, at `range` (nil: in the kind
-- byte, generated).
local function add_lsbs(tree, field, bits_field, range, value, bits)
    local item
    if range == nil then
        item = add_generated(tree, field, value)
    else
        item = tree:add(field, range, value)
    end
    item:add(bits_field, bits):set_generated()
    return item
end

-- The header part of a CO-S, CO-I or CO-N frame of kind byte `k` (section 8), read against its
-- context: the context, the decoded sequence number, IP-ID and fragment field. `fields` the
-- fields to show it with (a tunnel's outer part has its own). The sequence number and IP-ID are
-- decoded against the context's last frame in the file, as the compressor coded them.
local function plus_other_head(r, tree, dir, k, fields)
    local cid, ctx, lsb, id_lsbs, lsb3, off3, flags, id_range, id_item, crc_range, id8
    local short_cid, short_lsb = short_of(k)
    if short_cid ~= nil then
        cid, lsb = short_cid, short_lsb
        add_generated(tree, fields.cid, cid)
        tree:add(fields.crc, r:take(2))
    elseif k == 0x1E or k == 0x1F then
        cid = 0
        if k == 0x1F then
            local cr = r:take(1)
            cid = cr:uint()
            if cid == 0 then malformed() end
            tree:add(fields.cid, cr)
        else
            add_generated(tree, fields.cid, 0)
        end
        id_range = r:take(1)
        id_item = tree:add(f.n_id_octet, id_range)
        crc_range = r:take(2)
    elseif k == 0x1D then
        local frange = r:take(1)
        flags = frange:uint()
        local item = tree:add(fields.flags, frange)
        for _, fl in ipairs({ f.n_co_c, f.n_co_s, f.n_co_i, f.n_co_f, f.n_co_k, f.n_co_d }) do
            item:add(fl, frange)
        end
        cid = 0
        if flags >= 0x80 then
            local cr = r:take(1)
            cid = cr:uint()
            if cid == 0 then malformed() end
            tree:add(fields.cid, cr)
        else
            add_generated(tree, fields.cid, 0)
        end
    else
        malformed()
    end
    ctx = look("other", dir, cid)
    if not ctx then
        if crc_range ~= nil then tree:add(fields.crc, crc_range) end
        tree:add_proto_expert_info(e_no_context, string.format(
            "No IR-N of non-TCP CID %d is in the file: the rest cannot be read", cid))
        return nil
    end
    if fields.mode ~= nil then add_generated(tree, fields.mode, mode_text(ctx)) end
    -- CO-S: the sequence number's two LSBs in the kind byte (0 in a context without one).
    if short_cid ~= nil and has_seq(ctx) then
        add_lsbs(tree, fields.seq_lsbs, fields.seq_lsbs_bits, nil, lsb, 2)
    end
    if id_range ~= nil then
        -- CO-I (IPv4 only): in RTP and echo mode two sequence LSBs and six IP-ID LSBs; in a
        -- context whose sequence number is the IP-ID, its 8 LSBs.
        if not ctx.v4 then malformed() end
        local octet = id_range:uint()
        if own_ip_id(ctx) and ctx.rtp and ctx.frame then
            -- Frame mode: three sequence LSBs, the marker, the scaled timestamp's LSB and three
            -- LSBs of the IP-ID's offset from the sequence number.
            id_item:add(f.n_id_s3, id_range)
            id_item:add(f.n_id_m, id_range)
            id_item:add(f.n_id_t, id_range)
            id_item:add(f.n_id_o, id_range)
            lsb3, off3 = math.floor(octet / 32), octet % 8
            add_lsbs(tree, fields.seq_lsbs, fields.seq_lsbs_bits, id_range, lsb3, 3)
        elseif own_ip_id(ctx) then
            id_item:add(f.n_id_s, id_range)
            id_item:add(f.n_id_i, id_range)
            lsb, id_lsbs = math.floor(octet / 64), octet % 64
            add_lsbs(tree, fields.seq_lsbs, fields.seq_lsbs_bits, id_range, lsb, 2)
            add_lsbs(tree, fields.ip_id, fields.ip_id_bits, id_range, id_lsbs, 6)
        else
            id_item:append_text(" (the IP-ID's 8 LSBs: the sequence number's)")
            id8 = octet
            add_lsbs(tree, fields.seq_lsbs, fields.seq_lsbs_bits, id_range, octet, 8)
        end
        tree:add(fields.crc, crc_range)
    end
    local seq, ip_id, frag, step, stride, frame = ctx.seq, ctx.ip_id, ctx.frag, ctx.step, ctx.stride, ctx.frame
    local pair = ctx.pair
    if flags == nil then
        -- CO-S, CO-I: n sequence numbers on, the first value with the LSBs; CO-I in a context
        -- whose sequence number is the IP-ID: its 8 LSBs, as CO-N's S = 1.
        if not has_seq(ctx) and lsb ~= 0 then malformed() end
        local n = 0
        if id8 ~= nil then
            n = (lsb_decode(ctx.seq, id8, 8, 64) - ctx.seq) % 65536
        elseif lsb3 ~= nil then
            n = (lsb3 - ctx.seq) % 8
        elseif has_seq(ctx) and seq_grows(ctx) then
            n = (lsb - ctx.seq - 1) % 4 + 1
        elseif has_seq(ctx) then
            n = (lsb - ctx.seq) % 4
        end
        seq = (ctx.seq + n) % 65536
        if off3 ~= nil then
            local offset = lsb_decode((ctx.ip_id - ctx.seq) % 65536, off3, 3, 0)
            ip_id = (seq + offset) % 65536
        elseif id_lsbs ~= nil then
            ip_id = lsb_decode(ctx.ip_id, id_lsbs, 6, 4)
        elseif own_ip_id(ctx) and ctx.pair and not ctx.frame and short_cid ~= nil then
            -- Pair mode: one above the pair's last IP-ID (of any context of the same addresses
            -- and protocol).
            local last = look("pair", dir, pair_key(ctx))
            if last == nil then malformed() end
            ip_id = (last + 1) % 65536
        elseif own_ip_id(ctx) then
            if step then ip_id = (ctx.ip_id + n) % 65536 end
        end
    else
        local s_code, i_code = math.floor(flags / 32) % 4, math.floor(flags / 8) % 4
        local d = flags % 2 == 1
        local bad = s_code == 3 or i_code == 3 or (s_code ~= 0 and not has_seq(ctx))
            or ((i_code ~= 0 or d) and not own_ip_id(ctx))
            or (bit32.band(flags, 0x04) ~= 0 and not ctx.v4)
            or (bit32.band(flags, 0x02) ~= 0 and not has_checksum(ctx))
        if bad then malformed() end
        if s_code ~= 0 then
            local sr = r:take(s_code)
            add_lsbs(tree, fields.seq_lsbs, fields.seq_lsbs_bits, sr, sr:uint(), s_code * 8)
            if s_code == 1 then seq = lsb_decode(ctx.seq, sr:uint(), 8, 64) else seq = sr:uint() end
        end
        if i_code ~= 0 then
            local ir = r:take(i_code)
            add_lsbs(tree, fields.ip_id, fields.ip_id_bits, ir, ir:uint(), i_code * 8)
            if i_code == 1 then ip_id = lsb_decode(ctx.ip_id, ir:uint(), 8, 64) else ip_id = ir:uint() end
        elseif own_ip_id(ctx) then
            if d then ip_id = (ctx.ip_id + seq - ctx.seq) % 65536 end
        end
        if own_ip_id(ctx) then step = d end
        if bit32.band(flags, 0x04) ~= 0 then
            local fr = r:take(2)
            tree:add(fields.frag, fr)
            frag = fr:uint()
        end
        if ctx.rtp then
            local rr = r:take(1)
            local octet = rr:uint()
            local item = tree:add(f.n_rtp, rr)
            item:add(f.n_rtp_t, rr)
            item:add(f.n_rtp_m, rr)
            item:add(f.n_rtp_v, rr)
            if bit32.band(octet, 0x07) ~= 0 then malformed() end
            if bit32.band(octet, 0x08) ~= 0 and not own_ip_id(ctx) then malformed() end
            frame = bit32.band(octet, 0x10) ~= 0
            pair = bit32.band(octet, 0x08) ~= 0
            local t = math.floor(octet / 64)
            if t == 1 or t == 2 then
                tree:add(f.n_ts, r:take(t)):add(f.n_ts_bits, t * 8):set_generated()
            elseif t == 3 then
                tree:add(f.n_ts, r:take(4)):add(f.n_ts_bits, 32):set_generated()
                local sr = r:take(2)
                tree:add(f.n_stride, sr)
                stride = sr:uint()
            end
        end
    end
    if not ctx.v4 then ip_id = 0 elseif not own_ip_id(ctx) then ip_id = seq end
    if has_seq(ctx) then add_generated(tree, fields.seq, seq) end
    if ctx.v4 then add_generated(tree, fields.ip_id_value, ip_id) end
    if flags ~= nil and flags % 4 >= 2 then
        tree:add(fields.crc, r:take(2))
        tree:add(f.n_checksum, r:take(2))
    else
        if flags ~= nil then tree:add(fields.crc, r:take(2)) end
        if has_checksum(ctx) then add_generated(tree, f.n_checksum_computed, true) end
    end
    store("other", dir, cid, with(ctx, { seq = seq, ip_id = ip_id, frag = frag, step = step, stride = stride,
        frame = frame, pair = pair }))
    if ctx.v4 then store("pair", dir, pair_key(ctx), ip_id) end
    return { ctx = ctx, seq = seq, ip_id = ip_id, frag = frag }
end

local N_FIELDS = { cid = f.cid, flags = f.n_co_flags, seq_lsbs = f.n_seq_lsbs, seq_lsbs_bits = f.n_seq_lsbs_bits,
    seq = f.n_seq, ip_id = f.n_ip_id, ip_id_bits = f.n_ip_id_bits, ip_id_value = f.n_ip_id_value, frag = f.n_frag,
    crc = f.n_crc, mode = f.n_mode }
local T_FIELDS = { cid = f.t_cid, flags = f.t_flags, seq_lsbs = f.t_seq_lsbs, seq_lsbs_bits = f.t_seq_lsbs_bits,
    seq = f.t_seq, ip_id = f.t_ip_id, ip_id_bits = f.t_ip_id_bits, ip_id_value = f.t_outer_id, frag = f.t_frag,
    crc = f.t_crc }

-- ---------------------------------------------------------------------------------------------
-- taroc-plus: frames by kind byte.

local function form_of(kind, frame)
    if kind == 0 then return "TYPE_IP" end
    if kind == 6 then return "CONTEXT_STATE" end
    if kind == 0x08 then return "IR" end
    if kind == 0x09 or kind == 0x0C or kind == 0x0D then return "IR-R" end
    if kind == 0x0A then
        if frame:len() >= 1 and frame(0, 1):uint() < 0x10 then return "replicated IR-N" end
        return "IR-N"
    end
    if kind == 0x0B then return "IR-S" end
    if kind == 0x0F then return "compact SYN" end
    if kind == 0x0E then
        if frame:len() >= 1 and bit32.band(frame(0, 1):uint(), 0x0C) == 0x0C then return "compact IR, short form" end
        if frame:len() >= 2 then
            local flags = frame(1, 1):uint()
            if flags >= 0x80 and bit32.band(flags, 0x40) ~= 0 then return "compact IR, mirrored, numbers" end
            if flags >= 0x80 then return "compact IR, mirrored" end
        end
        return "compact IR"
    end
    if kind == 0x16 then return "packed IR" end
    if kind == 0x1D then return "CO-N" end
    if kind == 0x1E or kind == 0x1F then return "CO-I" end
    if kind >= 0x10 and kind <= 0x1C then return "CO-S" end
    if kind == 0x20 then return "tunnel" end
    if kind >= 0x21 and kind <= 0x28 then return "CO, CID prefix" end
    if kind >= 0x29 and kind <= 0x3F then return "CO, short code" end
    if kind >= 0x40 and kind <= 0x7F then return "CO" end
    return nil
end

local function family_of(kind)
    if kind <= 6 then return kinds[kind] end
    if kind > 0x20 then return "COMPRESSED_TCP" end
    if kind == 0x16 then return "UNCOMPRESSED_TCP" end
    if kind >= 0x10 then return "COMPRESSED_NON_TCP" end
    return "UNCOMPRESSED_TCP"
end

local plus_frame

-- Tunnel frame (0x20): | CO-N kind (0x1D) | CO-N header part | inner kind | inner frame |
-- (section 8.1).
local function plus_tunnel(tvb, pinfo, tree, subtree, dir)
    local r = reader(tvb, 0)
    local kr = r:take(1)
    local k = kr:uint()
    local ot = subtree:add(f.t_outer, tvb(0, 1))
    ot:add(f.t_kind, kr)
    if k ~= 0x1D then malformed() end
    local head = plus_other_head(r, ot, dir, k, T_FIELDS)
    ot:set_len(r.at)
    if head == nil then return end
    local ctx = head.ctx
    local kept = ctx.outer and (not ctx.v4 or head.frag % 16384 == 0)
    if not ctx.v4 then add_generated(ot, f.t_outer_id, 0) end
    add_generated(ot, f.t_kept, kept and true or false)
    local ir = r:take(1)
    local inner = ir:uint()
    subtree:add(f.t_inner, ir)
    -- IR frames that set a TCP context up, CO frames, IR-N, CO-S, CO-I and CO-N (section 8.1).
    local allowed = inner == 0x08 or inner == 0x0E or inner == 0x16 or inner == 0x09 or inner == 0x0C
        or inner == 0x0D or (inner >= 0x21 and inner <= 0x7F) or inner == 0x0A
        or (inner >= 0x10 and inner <= 0x1F)
    if not allowed or r:left() == 0 then malformed() end
    local form = form_of(inner, tvb(r.at):tvb())
    local it = subtree:add(taroc, tvb(r.at - 1), "Inner frame: " .. form)
    add_generated(it, f.form, form)
    plus_frame(tvb(r.at):tvb(), pinfo, tree, it, dir, inner,
        { kept = kept, v4 = ctx.v4, outer_id = head.ip_id })
end

-- Dissects one taroc-plus frame of kind byte `kind` (its tvb the frame after the kind byte).
plus_frame = function(tvb, pinfo, tree, subtree, dir, kind, tunnel)
    local r = reader(tvb, 0)
    if kind == 0x08 then
        return plus_ir(tvb, pinfo, tree, subtree, dir, tunnel)
    elseif kind == 0x0A then
        return plus_ir_n(tvb, pinfo, tree, subtree, dir)
    elseif kind == 0x09 or kind == 0x0C or kind == 0x0D then
        return plus_ir_r(r, pinfo, subtree, dir, kind, tunnel)
    elseif kind == 0x0B then
        return plus_ir_s(r, pinfo, subtree, dir)
    elseif kind == 0x0E or kind == 0x0F then
        return plus_compact(r, pinfo, subtree, dir, kind == 0x0F, tunnel, nil)
    elseif kind == 0x16 then
        return plus_compact(r, pinfo, subtree, dir, false, tunnel, true)
    elseif kind >= 0x10 and kind <= 0x1F then
        add_generated(subtree, f.n_kind, kind)
        local head = plus_other_head(r, subtree, dir, kind, N_FIELDS)
        if head ~= nil then
            add_generated(subtree, f.n_payload, r:left())
            payload(r, pinfo, tree)
        end
        return
    elseif kind == 0x20 then
        return plus_tunnel(tvb, pinfo, tree, subtree, dir)
    elseif kind >= 0x21 and kind <= 0x28 then
        local pr = r:take(1)
        local second = pr:uint()
        subtree:add(f.prefix_octet, pr)
        local cid = (kind - 0x21) * 4 + math.floor(second / 64) + 1
        add_generated(subtree, f.cid, cid)
        return plus_co(r, pinfo, subtree, dir, 0x40 + second % 64, cid, nil, tunnel)
    elseif kind >= 0x29 and kind <= 0x3F then
        local i = kind - 0x29
        local cid = 1
        if i >= 15 then cid, i = 2, i - 15 end
        add_generated(subtree, f.cid, cid)
        return plus_co(r, pinfo, subtree, dir, SHORT_KINDS[i + 1], cid, nil, tunnel)
    elseif kind >= 0x40 and kind <= 0x7F then
        return plus_co(r, pinfo, subtree, dir, kind, nil, nil, tunnel)
    end
end

-- taroc-plus feedback (CONTEXT_STATE, section 7): | 0x01 | CID ... |, | 0x02 | CID ... |,
-- | 0x03 |, | 0x04 | CID | checksum (2) | ... |, | 0x05 | (section 8).
local function plus_feedback(tvb, subtree)
    local r = reader(tvb, 0)
    local tr = r:take(1)
    local t = tr:uint()
    subtree:add(f.fb_type, tr)
    if t == 1 or t == 2 then
        if r:left() == 0 then malformed() end
        while r:left() > 0 do subtree:add(f.fb_cid, r:take(1)) end
    elseif t == 3 or t == 5 then
        if r:left() ~= 0 then malformed() end
    elseif t == 4 then
        if r:left() == 0 or r:left() % 3 ~= 0 then malformed() end
        while r:left() > 0 do
            subtree:add(f.fb_cid, r:take(1))
            subtree:add(f.fb_checksum, r:take(2))
        end
    else
        malformed()
    end
end

-- ---------------------------------------------------------------------------------------------
-- The record.

function taroc.init()
    random_ip_id = { [0] = {}, [1] = {} }
    frame_random = {}
    detected = "draft"
    frame_profile = {}
    plus_init()
end

-- Which format a frame of kind byte `kind` is read in: "draft", "plus", or "both" for TYPE_IP,
-- which both formats share. Auto: kinds 1 and 2 are the draft's, 8 and above taroc-plus's; a
-- CONTEXT_STATE frame of type 2 to 5 is taroc-plus's, one of type 1 (a context request in
-- both formats) is read in the format of the frames before it (the draft's if none).
local detected = "draft"
local frame_profile = {}
local function profile_of(kind, frame, pinfo)
    local pref = taroc.prefs.profile
    if pref == PROFILE_DRAFT then return "draft" end
    if pref == PROFILE_PLUS then return "plus" end
    if kind == 0 then return "both" end
    if pinfo.visited and frame_profile[pinfo.number] ~= nil then
        return frame_profile[pinfo.number]
    end
    local profile = detected
    if kind >= 8 or (kind == 6 and frame:len() > 0 and frame(0, 1):uint() ~= 1) then
        profile = "plus"
    elseif kind ~= 6 then
        profile = "draft"
    end
    if kind ~= 6 then detected = profile end
    frame_profile[pinfo.number] = profile
    return profile
end

-- Runs `fn`, turning a frame that breaks its format into expert info (and any other error too).
-- (A dissector this one calls, Wireshark's IP dissector on an IR frame's packet, reports its own
-- exceptions, as "Malformed Packet".)
local function guarded(subtree, fn)
    local ok, err = pcall(fn)
    if ok then return end
    if err == MALFORMED then
        subtree:add_proto_expert_info(e_malformed)
    elseif not (type(err) == "string" and err:find("Malformed frame", 1, true)) then
        subtree:add_proto_expert_info(e_bug, "Dissector error: " .. tostring(err))
    end
end

function taroc.dissector(tvb, pinfo, tree)
    if tvb:len() < 2 then return 0 end
    local direction = tvb(0, 1):uint() == 0 and 0 or 1
    local kind = tvb(1, 1):uint()
    local frame
    if tvb:len() > 2 then frame = tvb(2):tvb() else frame = ByteArray.new():tvb("Empty frame") end
    local profile = profile_of(kind, frame, pinfo)
    local form
    if profile == "draft" then
        if kind <= 2 or kind == 6 then form = kinds[kind] end
    else
        form = form_of(kind, frame)
    end
    local name = form or "unknown kind"
    pinfo.cols.protocol = "TAROC"
    pinfo.cols.info = name .. " (" .. directions[direction] .. ")"
    local subtree = tree:add(taroc, tvb(0, 2), "TAROC, " .. name)
    subtree:add(f.direction, tvb(0, 1))
    subtree:add(f.kind, tvb(1, 1))
    add_generated(subtree, f.profile, ({ draft = "draft", plus = "taroc-plus", both = "draft or taroc-plus" })[profile])
    if form == nil then
        subtree:add_proto_expert_info(e_unknown_kind)
        data_dissector:call(frame, pinfo, tree)
        return tvb:len()
    end
    add_generated(subtree, f.form, form)
    if profile == "draft" then
        guarded(subtree, function()
            if kind == 0 then
                ip_dissect(frame, pinfo, tree)
            elseif kind == 1 then
                uncompressed_tcp(frame, pinfo, tree, subtree, direction)
            elseif kind == 2 then
                compressed_tcp(frame, pinfo, tree, subtree, direction)
                if frame:len() > 0 then
                    pinfo.cols.info = string.format("COMPRESSED_TCP (%s) CID %d",
                        directions[direction], frame(0, 1):uint())
                end
            else
                context_state(frame, pinfo, subtree)
            end
        end)
        return tvb:len()
    end
    add_generated(subtree, f.family, family_of(kind))
    if kind == 0 then
        guarded(subtree, function() ip_dissect(frame, pinfo, tree) end)
        return tvb:len()
    end
    if kind == 6 then
        guarded(subtree, function() plus_feedback(frame, subtree) end)
        return tvb:len()
    end
    if pinfo.visited then
        current = { replay = true, values = memo[pinfo.number] or {} }
    else
        current = { replay = false, values = {} }
        memo[pinfo.number] = current.values
    end
    guarded(subtree, function()
        local cid = plus_frame(frame, pinfo, tree, subtree, direction, kind, nil)
        if cid ~= nil then
            pinfo.cols.info = string.format("%s (%s) CID %d", name, directions[direction], cid)
        end
    end)
    current = nil
    return tvb:len()
end

DissectorTable.get("wtap_encap"):add(wtap_encaps.USER0, taroc)

-- IPHC's CONTEXT_STATE (PPP protocol 0x2065) of type 3, RFC 2507's TCP header request as the
-- iphc schemes send it: | 3 | CID count | CID ... |. Wireshark's own context-state dissector knows
-- only RFC 2508's RTP types (1 and 2, three or four octets per context) and reports a type 3
-- frame as malformed; every other type still goes to it.
local iphc_cs = Proto("taroc_iphc_cs", "IPHC TCP header request")
local cs = {
    type = u8("taroc_iphc_cs.type", "Type", base.DEC, { [3] = "TCP header request" }),
    count = u8("taroc_iphc_cs.count", "CID count"),
    cid = u8("taroc_iphc_cs.cid", "CID"),
}
iphc_cs.fields = cs
local ppp_table = DissectorTable.get("ppp.protocol")
local crtp_cs = ppp_table:get_dissector(0x2065)
function iphc_cs.dissector(tvb, pinfo, tree)
    if tvb:len() < 1 or tvb(0, 1):uint() ~= 3 then
        if crtp_cs ~= nil then return crtp_cs:call(tvb, pinfo, tree) end
        return 0
    end
    pinfo.cols.protocol = "IPHC"
    pinfo.cols.info = "CONTEXT_STATE, TCP header request"
    local subtree = tree:add(iphc_cs, tvb())
    subtree:add(cs.type, tvb(0, 1))
    if tvb:len() < 2 or tvb(1, 1):uint() ~= tvb:len() - 2 then
        subtree:add_proto_expert_info(e_malformed)
        return tvb:len()
    end
    subtree:add(cs.count, tvb(1, 1))
    for at = 2, tvb:len() - 1 do
        subtree:add(cs.cid, tvb(at, 1))
    end
    return tvb:len()
end
ppp_table:add(0x2065, iphc_cs)
