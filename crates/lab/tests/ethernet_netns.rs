//! Real Linux TCP over raw Ethernet: two gateways, one per network namespace's TUN device,
//! sending their link frames in Ethernet frames of their own EtherType over a veth pair
//! ([`taroc_gateway::ethernet`]). For every scheme, with authentication and without, a kernel
//! TCP transfer must deliver exactly the bytes sent.
//!
//! Needs root, /dev/net/tun and iproute2. Without them the tests print why and pass, unless the
//! environment variable `CI` is set: then they fail (CI runs as root and must run them).

use std::time::Duration;

use taroc_core::variant::Variant;
use taroc_gateway::link::LinkConfig;
use taroc_lab::harness::{self, IpVersion, Mode, Scenario};
use taroc_lab::transfer::TransferConfig;

fn scenario(variant: &Variant, authenticated: bool, seed: u64) -> Scenario {
    Scenario {
        variants: [variant.clone(), variant.clone()],
        link: LinkConfig {
            mtu: 1500,
            ..LinkConfig::default()
        },
        tun_mtu: 1500,
        ip_version: IpVersion::V4,
        timestamps: true,
        congestion_control: None,
        transfer: TransferConfig {
            bytes: 2 * 1024 * 1024,
            seed,
            time_limit: Duration::from_secs(60),
        },
        seed,
        mode: Mode::Ethernet,
        authenticated,
    }
}

#[test]
fn every_scheme_over_raw_ethernet_with_and_without_authentication() {
    if !harness::environment_or_skip("ethernet netns") {
        return;
    }
    let mut cases = Vec::new();
    for (i, v) in harness::every_variant().iter().enumerate() {
        for auth in [true, false] {
            cases.push((v.clone(), auth, 31 + 2 * i as u64 + u64::from(auth)));
        }
    }
    let outcomes = harness::run_each(
        cases
            .iter()
            .map(|(v, auth, seed)| (format!("{} auth {auth}", v.name), scenario(v, *auth, *seed)))
            .collect(),
        harness::run,
    );
    let mut failures = Vec::new();
    for (label, outcome) in &outcomes {
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{label}: {e}"));
                continue;
            }
        };
        let t = &outcome.transfer;
        let [a, b] = &outcome.report.counters;
        println!(
            "ethernet {label}: {} B in {:.2} s, packets {}, medium bytes {} + {}, refused {} + {}",
            t.bytes_received,
            t.elapsed_ns as f64 / 1e9,
            outcome.report.packets(),
            a.medium_bytes,
            b.medium_bytes,
            a.rejected.total(),
            b.rejected.total(),
        );
        if !t.is_intact() {
            failures.push(format!(
                "{label}: bytes sent {} received {} completed {} first mismatch {:?}",
                t.bytes_sent, t.bytes_received, t.completed, t.first_mismatch
            ));
        }
        if a.checksum_dropped + b.checksum_dropped > 0 {
            failures.push(format!("{label}: rebuilt packets failed their checksum"));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

/// Sends `frame` (a whole Ethernet frame, header included) out of interface `index` through a
/// raw AF_PACKET socket.
fn send_raw(index: i32, frame: &[u8]) {
    // SAFETY: plain socket calls with valid buffers and a zeroed then filled sockaddr_ll.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0);
        assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
        let mut addr: libc::sockaddr_ll = std::mem::zeroed();
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_ifindex = index;
        addr.sll_halen = 6;
        addr.sll_addr[..6].copy_from_slice(&frame[..6]);
        let sent = libc::sendto(
            fd,
            frame.as_ptr().cast(),
            frame.len(),
            0,
            (&addr as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        );
        assert_eq!(
            sent,
            frame.len() as isize,
            "{}",
            std::io::Error::last_os_error()
        );
        libc::close(fd);
    }
}

/// Frames from another MAC address, with a length field that does not fit, of another
/// EtherType, or forged (a tag that does not verify) reach no decompressor: each is refused and
/// counted by reason; a genuine one after them is taken.
#[test]
fn foreign_malformed_and_forged_ethernet_frames_are_refused() {
    use taroc_gateway::auth::{AuthConfig, Key, DEFAULT_TAG_LEN};
    use taroc_gateway::endpoint::{Endpoint, EndpointConfig};
    use taroc_gateway::ethernet::{self, EthernetConfig, EthernetTransport, DEFAULT_ETHERTYPE};
    use taroc_gateway::transport::{Incoming, Transport};
    use taroc_gateway::{counters::Rejection, netns};
    if !harness::environment_or_skip("ethernet netns") {
        return;
    }
    let names = [
        format!("trf{}a", std::process::id() % 100_000),
        format!("trf{}b", std::process::id() % 100_000),
    ];
    netns::ip(&[
        "link", "add", &names[0], "type", "veth", "peer", "name", &names[1],
    ])
    .unwrap();
    struct Delete(String);
    impl Drop for Delete {
        fn drop(&mut self) {
            let _ = taroc_gateway::netns::ip(&["link", "del", &self.0]);
        }
    }
    let _delete = Delete(names[0].clone());
    for name in &names {
        netns::ip(&["link", "set", name, "up"]).unwrap();
    }
    let macs = names
        .each_ref()
        .map(|n| ethernet::interface_mac(n).unwrap());
    let index_a = {
        let name = std::ffi::CString::new(names[0].as_str()).unwrap();
        // SAFETY: a valid NUL-terminated name.
        unsafe { libc::if_nametoindex(name.as_ptr()) as i32 }
    };
    let mut b = EthernetTransport::open(&EthernetConfig {
        interface: names[1].clone(),
        peer: macs[0],
        ethertype: DEFAULT_ETHERTYPE,
        socket_buffer: taroc_gateway::socket::DEFAULT_SOCKET_BUFFER,
    })
    .unwrap();
    let auth = AuthConfig {
        key: Key::from_bytes([5; 32]),
        tag_len: DEFAULT_TAG_LEN,
    };
    let config = EndpointConfig {
        variants: [
            Variant::by_name("taroc-plus").unwrap(),
            Variant::by_name("taroc-plus").unwrap(),
        ],
        link: LinkConfig {
            mtu: 1500,
            ..LinkConfig::default()
        },
        tun_mtu: 1500,
        seed: 1,
        verify_checksums: true,
        auth: Some(auth),
        may_reorder: false,
    };
    let mut endpoint = Endpoint::new(&config, 2, 1_700_000_000_000_000_000).unwrap();
    let frame = |src: [u8; 6], ethertype: u16, payload: &[u8]| {
        let mut f = macs[1].0.to_vec();
        f.extend_from_slice(&src);
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(payload);
        f
    };
    // A link frame's worth of bytes that looks like a long-form frame but carries no valid tag.
    let mut forged = vec![0u8; 60];
    forged[0] = 0x80 | 0x01;
    let with_len = |body: &[u8]| {
        let mut p = (body.len() as u16).to_be_bytes().to_vec();
        p.extend_from_slice(body);
        p
    };
    send_raw(
        index_a,
        &frame(
            [0x02, 0, 0, 0, 0, 0x99],
            DEFAULT_ETHERTYPE,
            &with_len(&forged),
        ),
    );
    send_raw(
        index_a,
        &frame(macs[0].0, DEFAULT_ETHERTYPE, &[0x05, 0xdc, 1, 2, 3]),
    );
    send_raw(index_a, &frame(macs[0].0, 0x88B6, &with_len(&forged)));
    send_raw(
        index_a,
        &frame(macs[0].0, DEFAULT_ETHERTYPE, &with_len(&forged)),
    );
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut buffer = vec![0u8; 2048];
    let mut seen = Vec::new();
    while let Some(incoming) = b.receive(&mut buffer).unwrap() {
        if let Incoming::Frame { len, from_peer } = incoming {
            endpoint.datagram(
                0,
                from_peer,
                &buffer[..len],
                &mut |_: &[u8]| true,
                &mut |_: &[u8]| panic!("a forged frame reached the TUN device"),
            );
        }
        seen.push(incoming);
    }
    assert_eq!(
        seen,
        vec![
            Incoming::Refused(Rejection::Foreign),
            Incoming::Refused(Rejection::Malformed),
            Incoming::Frame {
                len: forged.len(),
                from_peer: true
            },
        ],
        "the frame of another EtherType never arrives"
    );
    assert_eq!(endpoint.counters()[1].rejected.forged, 1);
    assert_eq!(endpoint.counters()[1].delivered, 0);
}
