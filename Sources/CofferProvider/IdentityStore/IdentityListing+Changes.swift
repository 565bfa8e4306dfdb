/// Which rows of a listing's changed buckets left and which came (SPEC.md §7.6, bringing the
/// listing snapshot up to date).
///
/// Why by content and not by order: a sync of 100 edits changes about 140 of the 256 buckets,
/// so both sides hold over a million rows at a million entries and only a few hundred differ.
/// Sorting the fresh rows in service order and walking both sides compared their first columns
/// (a URL's host and port, found again at every comparison) a few million times: 1.0 s of the
/// 2.4 s the first `coffer list` took. Matching each row by what the table stores of it (the
/// fields `encode` writes: `contentHash`, then `sameContent`) needs no order at all; only the
/// rows that came are sorted, and they are few.
extension IdentityListing {
    /// - Parameters:
    ///   - old: rows in `oldText`; those of the slots `isChanged` marks are the changed buckets then.
    ///   - fresh: every row of the changed buckets now, in any order, in `freshText`.
    /// - Returns: the positions in `old` of the rows no fresh row equals byte for byte, ascending,
    ///   and the positions in `fresh` of the rows no old row equals, in service order. Each old
    ///   row pairs with at most one fresh row, so a row twice on one side is also counted twice.
    static func changes(
        from old: [Row], in oldText: UnsafeBufferPointer<UInt8>, changedSlots isChanged: [Bool],
        to fresh: [Row], in freshText: UnsafeBufferPointer<UInt8>
    ) -> (leaving: [Int], coming: [Int]) {
        // Both sides by slot: one bucket's rows at a time fit in the caches, where a table of a
        // million rows missed them at every probe. Fresh rows come bucket by bucket already.
        var oldBySlot = [[Int32]](repeating: [], count: IndexManifest.identitySlots)
        for (position, row) in old.enumerated() where isChanged[Int(row.slot)] { oldBySlot[Int(row.slot)].append(Int32(position)) }
        var leaving: [Int] = [], coming: [Int] = []
        var places: [Int32] = [], hashes: [Int] = [], paired: [Bool] = []
        var start = 0
        while start < fresh.count || oldBySlot.contains(where: { !$0.isEmpty }) {
            let slot = start < fresh.count ? Int(fresh[start].slot) : oldBySlot.firstIndex { !$0.isEmpty }!
            var end = start
            while end < fresh.count, fresh[end].slot == fresh[start].slot { end += 1 }
            let candidates = oldBySlot[slot]
            oldBySlot[slot] = []
            // The bucket's old rows in an open-addressing table of (hash, candidate), at most
            // two thirds full; a candidate that paired is marked, never removed.
            var capacity = 16
            while capacity < candidates.count + candidates.count / 2 { capacity *= 2 }
            let mask = capacity - 1
            places.removeAll(keepingCapacity: true)
            places.append(contentsOf: repeatElement(-1, count: capacity))
            hashes.removeAll(keepingCapacity: true)
            hashes.append(contentsOf: repeatElement(0, count: capacity))
            paired.removeAll(keepingCapacity: true)
            paired.append(contentsOf: repeatElement(false, count: candidates.count))
            for (candidate, position) in candidates.enumerated() {
                let hash = contentHash(of: old[Int(position)])
                var place = hash & mask
                while places[place] >= 0 { place = (place + 1) & mask }
                places[place] = Int32(candidate)
                hashes[place] = hash
            }
            for position in start..<end {
                let hash = contentHash(of: fresh[position])
                var place = hash & mask, found = false
                while places[place] >= 0 {
                    let candidate = Int(places[place])
                    if hashes[place] == hash, !paired[candidate],
                       sameContent(old[Int(candidates[candidate])], in: oldText, fresh[position], in: freshText) {
                        paired[candidate] = true
                        found = true
                        break
                    }
                    place = (place + 1) & mask
                }
                if !found { coming.append(position) }
            }
            for (candidate, position) in candidates.enumerated() where !paired[candidate] { leaving.append(Int(position)) }
            start = end
        }
        leaving.sort()
        coming.sort { servicePrecedes(fresh[$0], in: freshText, fresh[$1], in: freshText) }
        return (leaving, coming)
    }
}
