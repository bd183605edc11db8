//! Tests of the UDP transport's settings.

use super::*;
use crate::auth::{AuthConfig, Key, DEFAULT_TAG_LEN};
use crate::link::LinkConfig;
use crate::socket::DEFAULT_SOCKET_BUFFER;
use taroc_core::variant::Variant;
use taroc_core::Scheme;

fn config(listen: &str, peer: &str, auth: bool) -> UdpConfig {
    UdpConfig {
        listen: listen.parse().unwrap(),
        peer: peer.parse().unwrap(),
        socket_buffer: DEFAULT_SOCKET_BUFFER,
        endpoint: EndpointConfig {
            variants: [Variant::of(Scheme::Taroc), Variant::of(Scheme::Taroc)],
            link: LinkConfig {
                mtu: 1500,
                ..LinkConfig::default()
            },
            tun_mtu: 1500,
            seed: 1,
            verify_checksums: true,
            auth: auth.then(|| AuthConfig {
                key: Key::from_bytes([3; 32]),
                tag_len: DEFAULT_TAG_LEN,
            }),
            may_reorder: true,
        },
    }
}

#[test]
fn address_families_must_match() {
    assert!(check(&config("0.0.0.0:7000", "192.0.2.2:7000", true)).is_ok());
    assert!(check(&config("[::]:7000", "[::ffff:192.0.2.2]:7000", true)).is_ok());
    let e = check(&config("[::]:7000", "192.0.2.2:7000", true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("different address families") && e.contains("[::ffff:192.0.2.2]:7000"));
    let e = check(&config("0.0.0.0:7000", "[2001:db8::2]:7000", true))
        .unwrap_err()
        .to_string();
    assert!(e.contains("[::]:7000"), "{e}");
    let mut bad_tag = config("0.0.0.0:7000", "192.0.2.2:7000", true);
    bad_tag.endpoint.auth.as_mut().unwrap().tag_len = 2;
    assert!(check(&bad_tag)
        .unwrap_err()
        .to_string()
        .contains("tag length"));
}
