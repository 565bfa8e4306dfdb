import Glibc
import Dispatch

/// How many threads bulk reads use: the online cores, at most 8 (more only queue on the disk).
package let concurrentWorkerCount = max(1, min(8, sysconf(Int32(_SC_NPROCESSORS_ONLN))))

/// `(0..<count).map(transform)` on every core, in order. Used where one process reads and opens
/// hundreds of files (a full listing, verify): each file is an independent system-call and
/// decryption chain, so the cores divide the wall time. The first error (by index) is thrown.
package func concurrentMap<T>(_ count: Int, _ transform: (Int) throws -> T) throws -> [T] {
    let workers = min(concurrentWorkerCount, count)
    guard workers > 1 else { return try (0..<count).map(transform) }
    let results = UnsafeMutableBufferPointer<Result<T, any Error>?>.allocate(capacity: count)
    results.initialize(repeating: nil)
    defer {
        results.deinitialize()
        results.deallocate()
    }
    // Each worker writes only its own contiguous range of `results`.
    nonisolated(unsafe) let slots = results
    withoutActuallyEscaping(transform) { transform in
        nonisolated(unsafe) let transform = transform
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in (worker * count / workers)..<((worker + 1) * count / workers) {
                slots[index] = Result { try transform(index) }
            }
        }
    }
    return try results.map { try $0!.get() }
}

/// Runs `first` and `second` at once on two cores, returning when both are done; what `second`
/// throws is thrown then. For two independent passes over the same bytes (an attachment's hash
/// beside its encryption).
package func concurrently(_ first: () -> Void, _ second: () throws -> Void) throws {
    guard concurrentWorkerCount > 1 else {
        first()
        return try second()
    }
    var failure: (any Error)?
    withoutActuallyEscaping(first) { first in
        withoutActuallyEscaping(second) { second in
            nonisolated(unsafe) let (first, second) = (first, second)
            nonisolated(unsafe) var caught: (any Error)?
            DispatchQueue.concurrentPerform(iterations: 2) { part in
                if part == 0 { first() } else { do { try second() } catch { caught = error } }
            }
            failure = caught
        }
    }
    if let failure { throw failure }
}
