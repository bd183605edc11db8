-- Wireshark dissector for TAROC frames as `taroc eval --write-frames` writes them.
--
-- Encapsulation (LINKTYPE_USER0, 147; see README.md beside this file): every record is
--   [direction, 1 octet: 0 forward, 1 reverse] [frame kind, 1 octet] [frame]
-- with the frame kinds of taroc-core's FrameKind: 0 TYPE_IP, 1 UNCOMPRESSED_TCP,
-- 2 COMPRESSED_TCP, 6 CONTEXT_STATE.
--
-- The formats (crates/core/src/taroc/format.rs, docs/taroc-interpretations.md):
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
-- * CONTEXT_STATE: a taroc context request, [0x01][CID]...
--
-- Use: tshark -X lua_script:wireshark/taroc.lua -r frames.taroc.pcap -V
-- or copy this file into Wireshark's personal plugins folder.

local taroc = Proto("taroc", "TAROC header compression")

local directions = { [0] = "forward", [1] = "reverse" }
local kinds = {
    [0] = "TYPE_IP",
    [1] = "UNCOMPRESSED_TCP",
    [2] = "COMPRESSED_TCP",
    [3] = "FULL_HEADER",
    [4] = "COMPRESSED_TCP_NODELTA",
    [5] = "COMPRESSED_NON_TCP",
    [6] = "CONTEXT_STATE",
    [8] = "PLUS_IR",
    [9] = "PLUS_IR_R",
}
-- taroc-plus CO frames: kind bytes 0x40-0x7F (docs/taroc-plus-format.md).
for k = 0x40, 0x7f do
    kinds[k] = "PLUS_CO"
end
-- Bit lengths of C_WIN, C_ACK, C_SEQ, C_IP_ID per PT (draft section 7.3.2.1).
local wasi_bits = { [0] = { 10, 11, 11, 3 }, { 14, 15, 15, 7 }, { 16, 19, 19, 11 }, { 16, 23, 23, 15 } }

local f = {
    direction = ProtoField.uint8("taroc.direction", "Direction", base.DEC, directions),
    kind = ProtoField.uint8("taroc.kind", "Frame kind", base.DEC, kinds),
    cid = ProtoField.uint8("taroc.cid", "CID", base.DEC),
    ctx_flags = ProtoField.uint8("taroc.ctx_flags", "Context flags", base.HEX),
    ctx_random = ProtoField.bool("taroc.ctx_flags.random_ip_id", "RANDOM IP-ID", 8, nil, 0x01),
    ctx_ecn = ProtoField.uint8("taroc.ctx_flags.ecn", "Usual ECN", base.DEC, nil, 0x06),
    flags = ProtoField.uint8("taroc.flags", "Flags", base.HEX),
    flag_r = ProtoField.bool("taroc.flags.r", "R (R-octet present)", 8, nil, 0x80),
    flag_o = ProtoField.bool("taroc.flags.o", "O (options present)", 8, nil, 0x40),
    flag_i = ProtoField.bool("taroc.flags.i", "I (C_IP_ID present)", 8, nil, 0x20),
    flag_p = ProtoField.bool("taroc.flags.p", "P (TCP PSH)", 8, nil, 0x10),
    flag_s = ProtoField.bool("taroc.flags.s", "S (C_SEQ present)", 8, nil, 0x08),
    flag_a = ProtoField.bool("taroc.flags.a", "A (C_ACK present)", 8, nil, 0x04),
    flag_w = ProtoField.bool("taroc.flags.w", "W (C_WIN present)", 8, nil, 0x02),
    flag_u = ProtoField.bool("taroc.flags.u", "U (TCP URG, urgent pointer present)", 8, nil, 0x01),
    checksum = ProtoField.uint16("taroc.tcp_checksum", "TCP checksum", base.HEX),
    ip_id = ProtoField.uint16("taroc.ip_id", "IP-ID (RANDOM)", base.HEX),
    r_octet = ProtoField.uint8("taroc.r_octet", "R-octet", base.HEX),
    urgent = ProtoField.uint16("taroc.urgent", "Urgent pointer", base.DEC),
    wasi = ProtoField.bytes("taroc.wasi", "WASI"),
    pt = ProtoField.uint8("taroc.wasi.pt", "PT", base.DEC),
    c_win = ProtoField.uint32("taroc.wasi.win", "C_WIN (window LSBs)", base.HEX),
    c_ack = ProtoField.uint32("taroc.wasi.ack", "C_ACK (ack LSBs)", base.HEX),
    c_seq = ProtoField.uint32("taroc.wasi.seq", "C_SEQ (sequence LSBs)", base.HEX),
    c_ip_id = ProtoField.uint32("taroc.wasi.ip_id", "C_IP_ID (IP-ID LSBs)", base.HEX),
    options = ProtoField.uint8("taroc.options", "Options octet", base.HEX),
    opt_v = ProtoField.bool("taroc.options.v", "V (TS value present)", 8, nil, 0x08),
    opt_e = ProtoField.bool("taroc.options.e", "E (TS echo present)", 8, nil, 0x04),
    opt_sa = ProtoField.uint8("taroc.options.sa", "SA (SACK blocks)", base.DEC, nil, 0x03),
    ts_val = ProtoField.uint32("taroc.ts_val", "TS value LSBs", base.HEX),
    ts_val_bits = ProtoField.uint8("taroc.ts_val.bits", "TS value bits", base.DEC),
    ts_ecr = ProtoField.uint32("taroc.ts_ecr", "TS echo LSBs", base.HEX),
    ts_ecr_bits = ProtoField.uint8("taroc.ts_ecr.bits", "TS echo bits", base.DEC),
    sack_offset = ProtoField.uint32("taroc.sack.offset", "SACK left edge - ACK", base.DEC),
    sack_size = ProtoField.uint32("taroc.sack.size", "SACK block size", base.DEC),
    data_len = ProtoField.uint32("taroc.data_len", "TCP data length", base.DEC),
    request_type = ProtoField.uint8("taroc.request.type", "Request type", base.HEX,
        { [1] = "context request" }),
    request_cid = ProtoField.uint8("taroc.request.cid", "Requested CID", base.DEC),
}
taroc.fields = f

local e_malformed = ProtoExpert.new("taroc.malformed", "Malformed TAROC frame",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_unknown_ctx = ProtoExpert.new("taroc.unknown_context",
    "No UNCOMPRESSED_TCP seen for this CID: IP-ID mode assumed not RANDOM",
    expert.group.SEQUENCE, expert.severity.NOTE)
taroc.experts = { e_malformed, e_unknown_ctx }

local ip_dissector = Dissector.get("ip")
local ipv6_dissector = Dissector.get("ipv6")
local data_dissector = Dissector.get("data")

-- The RANDOM IP-ID flag of each context, per direction, as the UNCOMPRESSED_TCP frames seen so
-- far set it; and, per frame, the flag its COMPRESSED_TCP was read with (so that a second pass,
-- or a click in the GUI, reads a frame as the first, in-order pass did).
local random_ip_id = { [0] = {}, [1] = {} }
local frame_random = {}

function taroc.init()
    random_ip_id = { [0] = {}, [1] = {} }
    frame_random = {}
end

local function ip_dissect(tvb, pinfo, tree)
    if tvb:len() > 0 and tvb(0, 1):bitfield(0, 4) == 6 then
        ipv6_dissector:call(tvb, pinfo, tree)
    else
        ip_dissector:call(tvb, pinfo, tree)
    end
end

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

function taroc.dissector(tvb, pinfo, tree)
    if tvb:len() < 2 then return 0 end
    local direction = tvb(0, 1):uint() == 0 and 0 or 1
    local kind = tvb(1, 1):uint()
    pinfo.cols.protocol = "TAROC"
    pinfo.cols.info = (kinds[kind] or "unknown kind") .. " (" .. directions[direction] .. ")"
    local subtree = tree:add(taroc, tvb(0, 2), "TAROC, " .. (kinds[kind] or "unknown kind"))
    subtree:add(f.direction, tvb(0, 1))
    subtree:add(f.kind, tvb(1, 1))
    local frame = tvb(2):tvb()
    if kind == 0 then
        ip_dissect(frame, pinfo, tree)
    elseif kind == 1 then
        uncompressed_tcp(frame, pinfo, tree, subtree, direction)
    elseif kind == 2 then
        compressed_tcp(frame, pinfo, tree, subtree, direction)
        pinfo.cols.info = string.format("COMPRESSED_TCP (%s) CID %d", directions[direction],
            frame(0, 1):uint())
    elseif kind == 6 then
        context_state(frame, pinfo, subtree)
    else
        data_dissector:call(frame, pinfo, tree)
    end
    return tvb:len()
end

DissectorTable.get("wtap_encap"):add(wtap_encaps.USER0, taroc)
