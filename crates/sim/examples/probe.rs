//! Runs one Appendix B cell per argument set: `probe <kbps> <tcp> <ber> <mtu> <scheme> [seconds]`.
use taroc_sim::link::ErrorModel;
use taroc_sim::scenario::Scenario;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let s = Scenario {
        wireless_bps: (a[1].parse::<f64>().unwrap() * 1000.0) as u64,
        tcp: a[2].parse().unwrap(),
        errors: ErrorModel::Ber {
            ber: a[3].parse().unwrap(),
        },
        mtu: a[4].parse().unwrap(),
        scheme: a[5].clone(),
        duration_s: a.get(6).map_or(1000.0, |d| d.parse().unwrap()),
        ..Scenario::default()
    };
    let o = s.run().unwrap();
    println!(
        "{:.1} B/s events {} wall {:.3}s {:.1} Mev/s",
        o.goodput_bytes_per_s,
        o.events,
        o.wall_s,
        o.events as f64 / o.wall_s / 1e6
    );
    println!("{o:?}");
}
