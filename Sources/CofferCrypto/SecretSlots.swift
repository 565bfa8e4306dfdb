import CSodium
import Synchronization

/// Small secrets (keys, keyring payloads, most master passwords) share one guarded page.
///
/// `sodium_malloc` gives every allocation its own mapping: guard pages on both sides, a canary,
/// `mlock`, `MADV_DONTDUMP`; nine system calls to allocate and free one 32-byte key. A fill
/// handles six such secrets, and those calls were an eighth of its time. libsodium's own
/// documentation calls guarded allocations slow and meant for a few secrets, not for many
/// small ones ("Guarded heap allocations", doc.libsodium.org/memory_management).
///
/// So the first small secret of a process allocates one guarded, locked, never-dumped page
/// through `sodium_malloc` and carves it into `slotCount` slots of `slotLength` bytes. A slot is
/// wiped (`sodium_memzero`) when its secret is released, and the page lives until the process
/// exits. What is given up: an overrun of one slot reaches its neighbour inside the page
/// instead of a guard page; an overrun past the page still faults. When every slot is taken,
/// or a secret is longer than a slot, `SecureBytes` falls back to its own `sodium_malloc`.
package enum SecretSlots {
    /// The largest secret a slot holds: a 32-byte key, the keyring payload, a passphrase of
    /// up to 64 bytes.
    package static let slotLength = 64
    /// 63 slots: with libsodium's 16-byte canary the page holds 4,080 bytes.
    package static let slotCount = 63

    // nonisolated(unsafe): the pointer is set once (a lazy global is initialised exactly once);
    // which slot belongs to whom is guarded by `used`.
    nonisolated(unsafe) private static let page: UnsafeMutableRawPointer? = {
        guard (try? Sodium.ready()) != nil, let page = sodium_malloc(slotLength * slotCount) else { return nil }
        sodium_memzero(page, slotLength * slotCount)
        return page
    }()

    /// Bit `i` set: slot `i` is in use.
    private static let used = Mutex<UInt64>(0)

    /// A zeroed slot of `slotLength` bytes, or `nil` when none is free.
    package static func take() -> UnsafeMutableRawPointer? {
        guard let page else { return nil }
        let index: Int? = used.withLock { bits in
            let free = ~bits & (UInt64(1) << slotCount - 1)
            guard free != 0 else { return nil }
            let index = free.trailingZeroBitCount
            bits |= UInt64(1) << index
            return index
        }
        return index.map { page + $0 * slotLength }
    }

    /// Whether `pointer` is a slot of the shared page (as opposed to its own allocation).
    package static func owns(_ pointer: UnsafeMutableRawPointer) -> Bool {
        guard let page else { return false }
        return pointer >= page && pointer < page + slotLength * slotCount
    }

    /// Wipes a slot and makes it available again.
    package static func release(_ pointer: UnsafeMutableRawPointer) {
        guard let page else { return }
        sodium_memzero(pointer, slotLength)
        let index = (pointer - page) / slotLength
        used.withLock { bits in bits &= ~(UInt64(1) << index) }
    }
}
