//! CID allocation at the compressor: a stream keeps its CID; a new stream takes the lowest CID
//! never used, else the least recently used one (LRU).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::non_tcp::Generation;

/// One CID of a compressor.
#[derive(Debug, Clone)]
pub(crate) struct Slot<C> {
    /// The key of the stream using it (empty if none).
    key: Vec<u8>,
    /// When it was last used.
    stamp: u64,
    /// The context of its stream, once a packet of the stream was sent with a full header (or of
    /// the last stream that used it).
    pub ctx: Option<C>,
    /// Its generation (non-TCP CIDs only), kept across streams (section 8).
    pub generation: Generation,
}

/// The CIDs of one CID space (TCP or non-TCP) of a compressor.
#[derive(Debug, Clone)]
pub(crate) struct CidTable<C> {
    /// The largest CID (TCP_SPACE or NON_TCP_SPACE).
    max: u16,
    /// The CIDs used so far, by value.
    slots: Vec<Slot<C>>,
    /// Which CID each stream uses.
    by_key: BTreeMap<Vec<u8>, u16>,
    /// CIDs by the time of their last use, oldest first.
    lru: BTreeMap<u64, u16>,
    /// The use counter.
    clock: u64,
}

impl<C> CidTable<C> {
    /// An empty table of CIDs 0..=`max`.
    pub fn new(max: u16) -> CidTable<C> {
        CidTable {
            max,
            slots: Vec::new(),
            by_key: BTreeMap::new(),
            lru: BTreeMap::new(),
            clock: 0,
        }
    }

    fn touch(&mut self, cid: u16) {
        self.clock += 1;
        let slot = &mut self.slots[usize::from(cid)];
        self.lru.remove(&slot.stamp);
        slot.stamp = self.clock;
        self.lru.insert(self.clock, cid);
    }

    /// The CID of the stream `key`, giving it one (at most `limit`) if it has none; true if the
    /// CID is newly given (its context is then the previous stream's, if any: what the
    /// decompressor may still hold for the CID).
    pub fn assign(&mut self, key: &[u8], limit: u16) -> (u16, bool) {
        self.assign_avoiding(key, limit, None)
    }

    /// Moves the stream `key` from CID `from` to another CID (at most `limit`), newly given, so
    /// that nothing sent with the new CID can be decompressed against the old context. With a
    /// single CID in the space the stream keeps `from`.
    pub fn reassign(&mut self, key: &[u8], limit: u16, from: u16) -> u16 {
        if let Some(cid) = self.by_key.remove(key) {
            self.slots[usize::from(cid)].key.clear();
        }
        self.assign_avoiding(key, limit, Some(from)).0
    }

    fn assign_avoiding(&mut self, key: &[u8], limit: u16, avoid: Option<u16>) -> (u16, bool) {
        let limit = limit.min(self.max);
        // A key removed from `by_key`, whose buffer the new entry reuses.
        let mut spare = None;
        if let Some(&cid) = self.by_key.get(key) {
            if cid <= limit {
                self.touch(cid);
                return (cid, false);
            }
            spare = self.by_key.remove_entry(key).map(|(old, _)| old);
            self.slots[usize::from(cid)].key.clear();
        }
        let cid = if self.slots.len() <= usize::from(limit) {
            self.slots.push(Slot {
                key: Vec::new(),
                stamp: 0,
                ctx: None,
                generation: Generation::default(),
            });
            (self.slots.len() - 1) as u16
        } else {
            // Every CID up to the limit is in use: take the least recently used.
            let (&stamp, &cid) = self
                .lru
                .iter()
                .find(|(_, &cid)| cid <= limit && Some(cid) != avoid)
                .or_else(|| self.lru.iter().find(|(_, &cid)| cid <= limit))
                .expect("a CID space holds at least one CID up to its limit");
            self.lru.remove(&stamp);
            let old = self.slots[usize::from(cid)].key.as_slice();
            if let Some((old, _)) = self.by_key.remove_entry(old) {
                spare = Some(old);
            }
            cid
        };
        let slot_key = &mut self.slots[usize::from(cid)].key;
        slot_key.clear();
        slot_key.extend_from_slice(key);
        let mut owned = spare.unwrap_or_default();
        owned.clear();
        owned.extend_from_slice(key);
        self.by_key.insert(owned, cid);
        self.touch(cid);
        (cid, true)
    }

    /// The slot of `cid`, if it was ever used.
    pub fn slot_mut(&mut self, cid: u16) -> Option<&mut Slot<C>> {
        self.slots.get_mut(usize::from(cid))
    }
}
