import CNGHTTP2
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An event-loop thread of the nghttp2 backend: it owns the sockets, TLS objects and nghttp2 sessions of the pools
/// assigned to it.
///
/// ### Overview
/// The process has a small, fixed number of loops (``count``), not one per upstream identity: pools are assigned to
/// them in turn. A loop waits in `epoll_wait` for its sockets, an `eventfd` that other threads write to hand work
/// over, and the earliest deadline of its pools' state machines. Each turn it reads every ready socket (each read fed
/// to nghttp2 whole), takes the pools' new events in one batch per pool, runs due timers, and then writes everything
/// each connection has to send in one TLS write.
///
/// ### Implementation
/// This type is the thread-safe handle; ``NGHTTP2LoopThread`` is the state confined to the thread. Other threads
/// touch only ``pending`` (under its lock) and the eventfd, which they write at most once per batch: a pool's inbox
/// wakes its loop only when it was empty, and the loop's own flag only when no wake-up is on its way.
package final class NGHTTP2EventLoop: Sendable {
    /// How many loops the process runs: one per two cores, at least one and at most four. The loop does the I/O of
    /// thousands of streams a second on one core; the other cores run the callers.
    package static let count = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount / 2))
    private static let loops: [NGHTTP2EventLoop] = (0..<count).map { NGHTTP2EventLoop(index: $0) }
    private static let assigned = Atomic<Int>(0)

    /// The loop that takes the next pool.
    static func next() -> NGHTTP2EventLoop {
        loops[assigned.add(1, ordering: .relaxed).oldValue % loops.count]
    }

    struct Pending {
        var pools: [Int] = []
        var added: [(index: Int, seed: Seed)] = []
        var signalled = false
    }

    /// What a new pool's driver is made from on the loop.
    struct Seed: Sendable {
        let shared: HTTP2Pool.Shared
        let configuration: HTTP2PoolConfiguration
        let tls: TLSClientContext
        let logger: Logger
    }

    let epollFD: Int32
    let wakeFD: Int32
    let pending = Mutex(Pending())
    private let nextPoolIndex = Atomic<Int>(1)

    private init(index: Int) {
        // A TLS write to a connection the server closed must fail with EPIPE, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        // Token 0 is the eventfd; connections get tokens from 1.
        _ = relay_epoll_control(epollFD, EPOLL_CTL_ADD, wakeFD, relay_epoll_in, 0)
        let epollFD = epollFD
        let wakeFD = wakeFD
        let loop = self
        let thread = Thread {
            NGHTTP2LoopThread(handle: loop, epollFD: epollFD, wakeFD: wakeFD).run()
        }
        thread.name = "pushrelay-h2-\(index)"
        thread.start()
    }

    /// Registers a pool with this loop and returns what its callers share with it.
    func startPool(configuration: HTTP2PoolConfiguration, logger: Logger) throws(HTTP2Error) -> HTTP2Pool.Shared {
        let tls = try TLSClientContext(caFile: configuration.caFile)
        let index = nextPoolIndex.add(1, ordering: .relaxed).oldValue
        let shared = HTTP2Pool.Shared(wake: { [self] in self.wake(pool: index) })
        let seed = Seed(shared: shared, configuration: configuration, tls: tls, logger: logger)
        pending.withLock { pending in
            pending.added.append((index, seed))
            signalLoop(&pending)
        }
        return shared
    }

    /// A pool's inbox went from empty to non-empty.
    func wake(pool index: Int) {
        pending.withLock { pending in
            pending.pools.append(index)
            signalLoop(&pending)
        }
    }

    private func signalLoop(_ pending: inout Pending) {
        guard !pending.signalled else { return }
        pending.signalled = true
        _ = eventfd_write(wakeFD, 1)
    }
}

/// The state of an ``NGHTTP2EventLoop`` confined to its thread.
final class NGHTTP2LoopThread {
    private unowned let handle: NGHTTP2EventLoop
    private let epollFD: Int32
    private let wakeFD: Int32
    private let clock = ContinuousClock()
    private var drivers: [Int: NGHTTP2PoolDriver] = [:]
    private var connectionsByToken: [UInt64: (connection: NGHTTP2Connection, driver: NGHTTP2PoolDriver)] = [:]
    private var nextToken: UInt64 = 1
    /// One read buffer for every connection of the loop: a TLS record is at most 16 KiB, so reads fill it seldom.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)

    private static let maxEvents: Int32 = 256
    private static let maxWaitMilliseconds: Int64 = 1000

    init(handle: NGHTTP2EventLoop, epollFD: Int32, wakeFD: Int32) {
        self.handle = handle
        self.epollFD = epollFD
        self.wakeFD = wakeFD
    }

    deinit {
        readBuffer.deallocate()
    }

    var now: ContinuousClock.Instant { clock.now }

    func makeConnection(
        id: HTTP2Pool.ConnectionID,
        origin: UpstreamOrigin,
        tls: TLSClientContext,
        maxResponseBytes: Int,
        driver: NGHTTP2PoolDriver
    ) -> NGHTTP2Connection {
        let token = nextToken
        nextToken += 1
        let connection = NGHTTP2Connection(
            id: id,
            token: token,
            origin: origin,
            epollFD: epollFD,
            tls: tls,
            maxResponseBytes: maxResponseBytes
        )
        connectionsByToken[token] = (connection, driver)
        return connection
    }

    func forget(_ connection: NGHTTP2Connection) {
        connectionsByToken[connection.token] = nil
    }

    func run() {
        var tokens = [UInt64](repeating: 0, count: Int(Self.maxEvents))
        var flags = [UInt32](repeating: 0, count: Int(Self.maxEvents))
        while true {
            let count = relay_epoll_wait(epollFD, &tokens, &flags, Self.maxEvents, waitMilliseconds())
            let now = clock.now
            for index in 0..<Int(max(0, count)) {
                let token = tokens[index]
                if token == 0 {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeFD, &value)
                    continue
                }
                guard let entry = connectionsByToken[token] else { continue }
                entry.connection.socketReady(flags: flags[index], readBuffer: readBuffer)
                entry.driver.process(entry.connection, now: now)
                // The callers answered by what this socket brought resume now, while the loop goes on.
                entry.driver.deliverCompletions()
            }
            takePending(now: now)
            var anyClosed = false
            for driver in drivers.values {
                driver.advance(now: now)
                anyClosed = anyClosed || driver.isClosed
            }
            if anyClosed { drivers = drivers.filter { !$0.value.isClosed } }
        }
    }

    private func takePending(now: ContinuousClock.Instant) {
        let (added, pools) = handle.pending.withLock { pending in
            defer {
                pending.added.removeAll()
                pending.pools.removeAll(keepingCapacity: true)
                pending.signalled = false
            }
            return (pending.added, pending.pools)
        }
        for (index, seed) in added {
            drivers[index] = NGHTTP2PoolDriver(
                shared: seed.shared,
                configuration: seed.configuration,
                tls: seed.tls,
                logger: seed.logger,
                loop: self
            )
        }
        for index in pools { drivers[index]?.takeEvents(now: now) }
        // A pool registered and used in the same batch has its events taken here too.
        for (index, _) in added where !pools.contains(index) { drivers[index]?.takeEvents(now: now) }
    }

    private func waitMilliseconds() -> Int32 {
        let now = clock.now
        var wait = Self.maxWaitMilliseconds
        for driver in drivers.values {
            if driver.hasPendingWrites { return 0 }
            guard let deadline = driver.nextDeadline else { continue }
            let left = now.duration(to: deadline)
            wait = min(wait, max(0, left.milliseconds + 1))
        }
        return Int32(wait)
    }
}

@available(*, unavailable)
extension NGHTTP2LoopThread: Sendable {}
