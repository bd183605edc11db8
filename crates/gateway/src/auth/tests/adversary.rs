//! The authentication as a state machine under an adversary: two gateways that restart at
//! random, a link that loses and reorders, and an eavesdropper that replays any datagram it
//! saw (of either gateway, of any run, its own receiver's included) and forges others. Checked:
//! no frame is ever taken twice or by the side that sent it, and once the restarts stop the two
//! ends find each other within a bound, however the replays and forgeries go on.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use super::*;

/// The simulated time of one step, ns.
const STEP: u64 = MS;

/// Steps of chaos (restarts, loss, reordering), then steps with every datagram delivered.
const CHAOS_STEPS: u64 = 3000;
const CALM_STEPS: u64 = 1500;

/// The bound on resuming: once the restarts and the loss stop, both directions take every
/// frame again within this long (ns), replays and forgeries going on.
const RESUME_BOUND: u64 = 4 * HELLO_EVERY;

/// A frame's content: the sending run's id and the frame's number in that run.
fn content(run: u64, seq: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&run.to_be_bytes());
    out[8..].copy_from_slice(&seq.to_be_bytes());
    out
}

/// The sender id of a long-form datagram.
fn sender(datagram: &[u8]) -> u64 {
    u64::from_be_bytes(datagram[1..9].try_into().unwrap())
}

/// One gateway: its current run and the ids of all its runs.
struct Side {
    session: Session,
    run: u64,
    runs: Vec<u64>,
    sent: u64,
    /// Its clock's offset from the simulation's, ns (the two gateways' clocks differ).
    skew: i64,
    /// The frames (run, number) this side ever took, over all its runs.
    taken: std::collections::HashSet<(u64, u64)>,
}

impl Side {
    fn start(c: &AuthConfig, run: u64, now: u64, skew: i64) -> Side {
        Side {
            session: Session::new(c, run, now.wrapping_add_signed(skew), 1500),
            run,
            runs: vec![run],
            sent: 0,
            skew,
            taken: Default::default(),
        }
    }

    fn restart(&mut self, c: &AuthConfig, run: u64, now: u64) {
        self.session = Session::new(c, run, now.wrapping_add_signed(self.skew), 1500);
        self.run = run;
        self.runs.push(run);
        self.sent = 0;
    }
}

struct World {
    rng: ChaCha8Rng,
    config: AuthConfig,
    sides: [Side; 2],
    /// Datagrams on their way to side `i`.
    flight: [Vec<Vec<u8>>; 2],
    /// Every datagram either side sent.
    recorded: Vec<Vec<u8>>,
    next_run: u64,
    now: u64,
    /// Frames each side took from the other's current run in this step.
    took_current: [bool; 2],
}

impl World {
    fn new(seed: u64) -> World {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let config = config(8);
        let skew = |rng: &mut ChaCha8Rng| (rng.next_u64() % 4_000_000_000) as i64 - 2_000_000_000;
        let now = START;
        let (s0, s1) = (skew(&mut rng), skew(&mut rng));
        let mut world = World {
            sides: [
                Side::start(&config, 100, now, s0),
                Side::start(&config, 200, now, s1),
            ],
            rng,
            config,
            flight: [Vec::new(), Vec::new()],
            recorded: Vec::new(),
            next_run: 300,
            now,
            took_current: [false; 2],
        };
        world.hello_at_start(0);
        world.hello_at_start(1);
        world
    }

    fn chance(&mut self, per_mille: u64) -> bool {
        self.rng.next_u64() % 1000 < per_mille
    }

    fn put(&mut self, to: usize, datagram: Vec<u8>, reorder: bool) {
        self.recorded.push(datagram.clone());
        let at = if reorder && !self.flight[to].is_empty() {
            (self.rng.next_u64() as usize) % (self.flight[to].len() + 1)
        } else {
            self.flight[to].len()
        };
        self.flight[to].insert(at, datagram);
    }

    fn hello_at_start(&mut self, side: usize) {
        self.sides[side].session.owe_hello();
        self.send_hello(side, false);
    }

    fn send_hello(&mut self, side: usize, reorder: bool) {
        let mut out = Vec::new();
        if self.sides[side].session.hello(self.now, &mut out) {
            self.put(1 - side, out, reorder);
        }
    }

    fn send_frame(&mut self, side: usize, reorder: bool) {
        let s = &mut self.sides[side];
        let frame = content(s.run, s.sent);
        s.sent += 1;
        let mut out = Vec::new();
        s.session
            .sealer
            .seal(self.now, FrameKind::CompressedTcp, &frame, &mut out);
        self.put(1 - side, out, reorder);
    }

    /// Side `to` receives `datagram`; checks what it takes.
    fn receive(&mut self, to: usize, datagram: &[u8], reorder: bool) {
        let (opened, hello) = self.sides[to].session.open(datagram);
        if let Ok(Opened::Frame(_, frame)) = opened {
            let run = u64::from_be_bytes(frame[..8].try_into().unwrap());
            let seq = u64::from_be_bytes(frame[8..].try_into().unwrap());
            let me = &mut self.sides[to];
            assert!(
                !me.runs.contains(&run),
                "side {to} took a frame of its own run {run}"
            );
            assert!(
                me.taken.insert((run, seq)),
                "side {to} took ({run}, {seq}) twice"
            );
            if run == self.sides[1 - to].run {
                self.took_current[to] = true;
            }
        }
        if hello {
            self.send_hello(to, reorder);
        }
    }

    /// One step of the world; `chaos` allows restarts, loss and reordering.
    fn step(&mut self, chaos: bool) {
        self.now += STEP;
        self.took_current = [false; 2];
        for side in 0..2 {
            if chaos && self.chance(2) {
                let run = self.next_run;
                self.next_run += 1;
                let now = self.now;
                self.sides[side].restart(&self.config.clone(), run, now);
                self.flight[side].clear();
                self.hello_at_start(side);
            }
            if !chaos || self.chance(700) {
                self.send_frame(side, chaos);
            }
        }
        // The eavesdropper: replays, to either side, of anything ever sent, and forgeries.
        if !self.recorded.is_empty() && self.chance(100) {
            let i = (self.rng.next_u64() as usize) % self.recorded.len();
            let mut d = self.recorded[i].clone();
            let to = (self.rng.next_u64() % 2) as usize;
            if self.chance(300) {
                let bit = (self.rng.next_u64() as usize) % (d.len() * 8);
                d[bit / 8] ^= 1 << (bit % 8);
            }
            self.receive(to, &d, chaos);
        }
        for to in 0..2 {
            for d in std::mem::take(&mut self.flight[to]) {
                if chaos && self.chance(100) {
                    continue;
                }
                self.receive(to, &d, chaos);
            }
        }
        for side in 0..2 {
            self.send_hello(side, chaos);
        }
    }
}

#[test]
fn the_link_always_resumes_and_never_takes_a_frame_twice() {
    let mut worst = 0;
    let seeds = std::env::var("ADV_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(0..100, |s: u64| s..s + 1);
    for seed in seeds {
        let mut world = World::new(seed);
        for _ in 0..CHAOS_STEPS {
            world.step(true);
        }
        // The calm begins with a restart of one side or both, and the attack that wedged an
        // earlier design: each restarted side is sent a long frame of its own previous run.
        for side in 0..2 {
            if seed % 3 == side as u64 || seed % 3 == 2 {
                let own_old: Vec<Vec<u8>> = world
                    .recorded
                    .iter()
                    .filter(|d| d[0] & LONG != 0)
                    .filter(|d| sender(d) == world.sides[side].run)
                    .cloned()
                    .collect();
                let run = world.next_run;
                world.next_run += 1;
                let now = world.now;
                let c = world.config.clone();
                world.sides[side].restart(&c, run, now);
                world.hello_at_start(side);
                if let Some(d) = own_old.last() {
                    world.receive(side, d, false);
                }
            }
        }
        let calm = world.now;
        // When each direction last failed to take a frame of the other's current run.
        let mut last_gap = calm;
        for _ in 0..CALM_STEPS {
            world.step(false);
            if world.took_current != [true; 2] {
                last_gap = world.now;
                if std::env::var("ADV_DEBUG").is_ok() {
                    let [a, b] = &world.sides;
                    eprintln!(
                        "{} ms: took {:?} a run {} peer {:?} cand {:?} owed {:?}; b run {} peer {:?} cand {:?} owed {:?}",
                        (world.now - calm) / MS,
                        world.took_current,
                        a.run,
                        a.session.opener.peer_id(),
                        a.session.opener.candidate_id(),
                        a.session.hello_due().map(|t| (t.saturating_sub(world.now)) / MS),
                        b.run,
                        b.session.opener.peer_id(),
                        b.session.opener.candidate_id(),
                        b.session.hello_due().map(|t| (t.saturating_sub(world.now)) / MS),
                    );
                }
            }
        }
        let resumed = last_gap - calm;
        assert!(
            resumed <= RESUME_BOUND,
            "seed {seed}: resumed {} ms after the calm began",
            resumed / MS
        );
        let [a, b] = &world.sides;
        assert_eq!(a.session.opener.peer_id(), Some(b.run), "seed {seed}");
        assert_eq!(b.session.opener.peer_id(), Some(a.run), "seed {seed}");
        worst = worst.max(resumed);
    }
    eprintln!("worst time to resume: {} ms", worst / MS);
}
