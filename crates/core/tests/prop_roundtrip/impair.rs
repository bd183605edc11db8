//! Impairments.

use super::*;

/// Loss, duplication and reordering rates, in permille.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Impairment {
    pub(crate) loss: u32,
    pub(crate) duplicate: u32,
    pub(crate) reorder: u32,
}

impl Impairment {
    pub(crate) fn is_clean(&self) -> bool {
        self.loss == 0 && self.duplicate == 0 && self.reorder == 0
    }

    /// Applies the impairment to a sequence: each item is lost, kept, or kept twice; a kept
    /// copy may be held back behind up to 5 later items.
    pub(crate) fn apply<T: Clone>(&self, items: Vec<T>, rng: &mut Rng) -> Vec<T> {
        if self.is_clean() {
            return items;
        }
        let mut keyed = Vec::with_capacity(items.len() + items.len() / 8);
        for (i, item) in items.into_iter().enumerate() {
            if rng.chance(self.loss) {
                continue;
            }
            let copies = if rng.chance(self.duplicate) { 2 } else { 1 };
            for c in 0..copies {
                let delay = if rng.chance(self.reorder) {
                    1 + rng.below(5) as usize
                } else {
                    0
                };
                keyed.push((
                    (i + delay) * 4 + 1 + c + usize::from(delay > 0),
                    item.clone(),
                ));
            }
        }
        keyed.sort_by_key(|(k, _)| *k);
        keyed.into_iter().map(|(_, item)| item).collect()
    }
}

pub(crate) fn impairment() -> impl Strategy<Value = Impairment> {
    prop_oneof![
        3 => Just(Impairment::default()),
        2 => (prop_oneof![Just(0u32), 5u32..30, 30u32..200], prop_oneof![Just(0u32), 5u32..40], prop_oneof![Just(0u32), 5u32..60])
            .prop_map(|(loss, duplicate, reorder)| Impairment { loss, duplicate, reorder }),
    ]
}

/// How the packets use the links: one compressor/decompressor pair for both directions, or one
/// pair per direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Shared,
    PerDirection,
}

/// A whole test case.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) specs: Vec<FlowSpec>,
    pub(crate) events: Vec<Event>,
    pub(crate) seed: u64,
    pub(crate) layout: Layout,
    pub(crate) before: Impairment,
    pub(crate) link: Impairment,
    /// Frames to corrupt per link (only TAROC-kind frames are corrupted: a `TYPE_IP` frame is an
    /// IP packet the decompressor is not asked to verify).
    pub(crate) corrupt: u8,
    pub(crate) taroc: TarocConfig,
}

pub(crate) fn taroc_config() -> impl Strategy<Value = TarocConfig> {
    (
        prop_oneof![4 => Just(2u32), 1 => Just(1u32), 1 => Just(4u32)],
        prop_oneof![4 => Just(1500u32), 1 => Just(536u32)],
        prop_oneof![4 => Just(25_000u32), 1 => Just(3_000u32), 1 => Just(1_000_000u32)],
        prop_oneof![4 => Just(256usize), 1 => 1usize..4],
        prop_oneof![4 => Just(256usize), 1 => 1usize..8],
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        prop_oneof![
            3 => Just(Repair::default()),
            2 => Just(Repair::live()),
            1 => (1u32..40).prop_map(|refresh_packets| Repair {
                refresh_packets,
                repeated_retransmission: true,
                context_requests: true,
                ..Repair::default()
            }),
        ],
    )
        .prop_map(
            |(
                k,
                mss,
                issthresh,
                max_contexts,
                max_vsw_entries,
                (behind, since_push, covers, repeat),
                repair,
            )| {
                TarocConfig {
                    k,
                    mss,
                    issthresh,
                    max_contexts,
                    max_vsw_entries,
                    improvements: Improvements {
                        code_behind_window: behind,
                        progress_since_push: since_push,
                        checksum_covers_ip_id: covers,
                        start_repeats: u8::from(repeat),
                    },
                    repair,
                }
            },
        )
}

/// `taroc-plus`'s settings for a case: the window tracking, limits and repairs of its TAROC
/// settings (`taroc-plus` has no improvements to turn on: its coding is its own), and what the
/// link is declared to lose, drawn from the case's `seed` (half the cases: nothing).
pub(crate) fn plus_config(taroc: &TarocConfig, seed: u64) -> PlusConfig {
    let declared = [
        LinkLoss::Unseen,
        LinkLoss::Unseen,
        LinkLoss::Frames,
        LinkLoss::Bursts,
    ];
    PlusConfig {
        link_loss: declared[(seed >> 62) as usize],
        k: taroc.k,
        mss: taroc.mss,
        issthresh: taroc.issthresh,
        max_contexts: taroc.max_contexts,
        max_vsw_entries: taroc.max_vsw_entries,
        repair: taroc.repair,
    }
}

pub(crate) fn case(corrupting: bool) -> impl Strategy<Value = Case> {
    let corrupt = if corrupting { 1u8..4 } else { 0u8..1 };
    (prop::collection::vec(flow_spec(), 1..5), any::<u64>())
        .prop_flat_map(move |(specs, seed)| {
            let n = specs.len();
            (
                Just(specs),
                prop::collection::vec(event(n), 20..600),
                Just(seed),
                prop_oneof![Just(Layout::Shared), Just(Layout::PerDirection)],
                impairment(),
                impairment(),
                corrupt.clone(),
                taroc_config(),
            )
        })
        .prop_map(
            |(specs, events, seed, layout, before, link, corrupt, taroc)| Case {
                specs,
                events,
                seed,
                layout,
                before,
                link,
                corrupt,
                taroc,
            },
        )
}
