import Synchronization

/// Holds every arriving task until `count` tasks have arrived, then lets all of them (and any later ones) through.
///
/// Cancellation releases a waiting task, so a server shutdown never hangs on a gate that a failed test left closed.
final class Gate: Sendable {
    private struct State {
        var arrived = 0
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let count: Int
    private let state = Mutex(State())

    init(count: Int) {
        self.count = count
    }

    func arrive() async {
        let (ticket, opened) = self.state.withLock { state -> (Int, [CheckedContinuation<Void, Never>]?) in
            state.arrived += 1
            if state.arrived >= self.count {
                let released = Array(state.waiting.values)
                state.waiting = [:]
                return (state.arrived, released)
            }
            return (state.arrived, nil)
        }
        if let opened {
            for continuation in opened { continuation.resume() }
            return
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let isOpen = self.state.withLock { state in
                    if state.arrived >= self.count || Task.isCancelled {
                        return true
                    }
                    state.waiting[ticket] = continuation
                    return false
                }
                if isOpen {
                    continuation.resume()
                }
            }
        } onCancel: {
            self.state.withLock { $0.waiting.removeValue(forKey: ticket) }?.resume()
        }
    }
}

/// A thread-safe list that handlers append to and tests read.
final class Recorder<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])

    func append(_ element: Element) {
        self.elements.withLock { $0.append(element) }
    }

    var all: [Element] {
        self.elements.withLock { $0 }
    }
}
