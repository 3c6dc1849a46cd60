/// An HTTP header field.
package struct HTTPHeader: Sendable, Equatable, Hashable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One request for the pool: method, absolute `https` URL, headers and body.
package struct HTTP2Request: Sendable, Equatable {
    package var method: String
    package var url: String
    package var headers: [HTTPHeader]
    package var body: [UInt8]
    /// How long the request may take in all, queueing included; the pool's default when `nil`.
    package var timeout: Duration?
    /// Open a new connection for this request instead of reusing one (APNs: after `Shutdown`, `IdleTimeout` or
    /// `UnrelatedKeyIdInToken`, the connection that answered is not to be trusted).
    package var freshConnection: Bool

    package init(
        method: String = "POST",
        url: String,
        headers: [HTTPHeader] = [],
        body: [UInt8] = [],
        timeout: Duration? = nil,
        freshConnection: Bool = false
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.freshConnection = freshConnection
    }
}

/// A response that arrived: status, headers, body and timings.
///
/// The header fields are kept as the bytes that arrived, one buffer per response (each field a 4-byte name length,
/// the name, a 4-byte value length, the value): a caller reads one or two of them (`apns-id`, `retry-after`), so
/// strings are made only for those, not for every field of every response on the event loop
/// (`relay-bench transport`: about 5 % of the loop's time went into header strings).
package struct HTTP2Response: Sendable, Equatable {
    package var status: Int
    package var body: [UInt8]
    package var timings: Timings
    private var fields: [UInt8]

    package init(status: Int, headers: [HTTPHeader], body: [UInt8], timings: Timings = .init()) {
        self.status = status
        self.body = body
        self.timings = timings
        var fields = FieldBuffer()
        for header in headers {
            fields.append(name: Array(header.name.lowercased().utf8), value: Array(header.value.utf8))
        }
        self.fields = fields.bytes
    }

    init(status: Int, fields: FieldBuffer, body: [UInt8], timings: Timings) {
        self.status = status
        self.body = body
        self.timings = timings
        self.fields = fields.bytes
    }

    /// Header fields with lowercase names, in arrival order.
    package var headers: [HTTPHeader] {
        var result: [HTTPHeader] = []
        FieldBuffer.forEach(in: fields) { name, value in
            result.append(HTTPHeader(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
            return true
        }
        return result
    }

    /// The first value of a header, by case-insensitive name.
    package func header(_ name: String) -> String? {
        let lower = Array(name.lowercased().utf8)
        var found: String?
        FieldBuffer.forEach(in: fields) { fieldName, value in
            guard fieldName.elementsEqual(lower) else { return true }
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// Where a request's time went.
    package struct Timings: Sendable, Equatable {
        /// Waiting in the pool's queue for a free stream.
        package var queued: Duration = .zero
        /// In libcurl, from hand-over to the complete response (connecting included when it had to connect).
        package var transfer: Duration = .zero
        /// Whether this request opened a new connection.
        package var openedConnection: Bool = false

        package init(queued: Duration = .zero, transfer: Duration = .zero, openedConnection: Bool = false) {
            self.queued = queued
            self.transfer = transfer
            self.openedConnection = openedConnection
        }
    }
}

/// Header fields as length-prefixed bytes (see ``HTTP2Response``).
struct FieldBuffer {
    private(set) var bytes: [UInt8] = []

    mutating func append<Name: Collection<UInt8>, Value: Collection<UInt8>>(name: Name, value: Value) {
        // One allocation for a typical response's fields rather than one per doubling.
        if bytes.capacity == 0 { bytes.reserveCapacity(256) }
        // The field is laid out in a scratch buffer (on the stack when small) and appended in one call: appending
        // each length byte and each part on its own was about 2 % of the process in `relay-bench transport`, where
        // the event loop stores half a dozen fields per response.
        let nameCount = name.count
        let valueCount = value.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8 + nameCount + valueCount) { field in
            Self.store(nameCount, in: field, at: 0)
            _ = UnsafeMutableBufferPointer(rebasing: field[4..<(4 + nameCount)]).initialize(from: name)
            Self.store(valueCount, in: field, at: 4 + nameCount)
            _ = UnsafeMutableBufferPointer(rebasing: field[(8 + nameCount)...]).initialize(from: value)
            bytes.append(contentsOf: UnsafeBufferPointer(field))
        }
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with each name and value until it returns `false`.
    static func forEach(in bytes: [UInt8], _ body: (ArraySlice<UInt8>, ArraySlice<UInt8>) -> Bool) {
        var index = 0
        while index + 4 <= bytes.count {
            let nameLength = readLength(bytes, at: index)
            let nameStart = index + 4
            let valueLengthAt = nameStart + nameLength
            guard valueLengthAt + 4 <= bytes.count else { return }
            let valueLength = readLength(bytes, at: valueLengthAt)
            let valueStart = valueLengthAt + 4
            guard valueStart + valueLength <= bytes.count else { return }
            guard body(bytes[nameStart..<valueLengthAt], bytes[valueStart..<(valueStart + valueLength)]) else { return }
            index = valueStart + valueLength
        }
    }

    /// Writes `length` as 4 bytes, least significant first, at `index`.
    private static func store(_ length: Int, in field: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
        let value = UInt32(truncatingIfNeeded: length)
        field.initializeElement(at: index, to: UInt8(truncatingIfNeeded: value))
        field.initializeElement(at: index + 1, to: UInt8(truncatingIfNeeded: value >> 8))
        field.initializeElement(at: index + 2, to: UInt8(truncatingIfNeeded: value >> 16))
        field.initializeElement(at: index + 3, to: UInt8(truncatingIfNeeded: value >> 24))
    }

    private static func readLength(_ bytes: [UInt8], at index: Int) -> Int {
        Int(bytes[index]) | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2]) << 16 | Int(bytes[index + 3]) << 24
    }
}
