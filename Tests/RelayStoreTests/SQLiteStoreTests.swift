import Foundation
import GRDB
import RelayCore
import Testing

@testable import RelayStore

/// What only the SQLite store promises: a file that outlives the process, and the store URL of the configuration.
@Suite struct SQLiteStoreTests {
    @Test(.timeLimit(.minutes(1)))
    func dataSurvivesReopeningTheFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // The parent folders do not exist yet: the store makes them.
        let path = folder.path("nested/deeper/relay.db")
        let tenant = Fixture.tenant("a")
        var key = Fixture.key("key-1", tenantID: tenant.id)
        let receipt = Fixture.receipt("r1", provider: .expo, expoTicketID: "T")

        let fingerprintKey: [UInt8]
        do {
            let store = try SQLiteStore(path: path)
            try await store.migrate()
            try await store.createTenant(tenant)
            try await store.createKey(key)
            try await store.markKeysUsed([key.id], at: Fixture.date(5))
            try await store.commit(StoreBatch(receipts: [receipt]))
            fingerprintKey = try await store.fingerprintKey()
        }
        #expect(folder.fileExists("nested/deeper/relay.db"))

        let reopened = try SQLiteStore(path: path)
        try await reopened.migrate()
        key.lastUsedAt = Fixture.date(5)
        #expect(try await reopened.tenants() == [tenant])
        #expect(try await reopened.key(id: key.id) == key)
        #expect(try await reopened.receipts(ids: ["r1"], tenantID: tenant.id) == [receipt])
        #expect(try await reopened.pendingExpoTickets(sentBefore: Fixture.date(1), limit: 10) == ["T"])
        #expect(try await reopened.fingerprintKey() == fingerprintKey)
    }

    @Test(.timeLimit(.minutes(1)))
    func storesOnOneFileAgree() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // Two instances (as two processes would) on a fresh file: one fingerprint key, one owner of a name.
        let first = try SQLiteStore(path: folder.path("relay.db"))
        let second = try SQLiteStore(path: folder.path("relay.db"))
        try await first.migrate()
        try await second.migrate()

        async let a = first.fingerprintKey()
        async let b = second.fingerprintKey()
        let (keyA, keyB) = try await (a, b)
        #expect(keyA == keyB)

        try await first.createTenant(Fixture.tenant("a", id: "tenant-1"))
        let error = await #expect(throws: StoreError.self) {
            try await second.createTenant(Fixture.tenant("a", id: "tenant-2"))
        }
        #expect(error?.kind == .duplicate)
        #expect(try await second.tenant(named: "a")?.id == "tenant-1")
    }

    @Test(.timeLimit(.minutes(1)))
    func openResolvesRelativePathsAgainstTheDirectory() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }

        let store = try SQLiteStore.open(url: "sqlite://data/relay.db", relativeTo: folder.url.path)
        try await store.migrate()
        try await store.createTenant(Fixture.tenant("a"))
        #expect(folder.fileExists("data/relay.db"))

        let tidied = try SQLiteStore.open(url: "sqlite://./data/../data/relay.db", relativeTo: folder.url.path)
        #expect(try await tidied.tenant(named: "a") != nil, "the same file")
    }

    @Test(.timeLimit(.minutes(1)))
    func openTakesAbsolutePathsAndMemory() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let elsewhere = try TemporaryFolder()
        defer { elsewhere.remove() }

        let absolute = folder.path("absolute.db")
        #expect(absolute.hasPrefix("/"))
        let store = try SQLiteStore.open(url: "sqlite://\(absolute)", relativeTo: elsewhere.url.path)
        try await store.migrate()
        #expect(folder.fileExists("absolute.db"))

        let memory = try SQLiteStore.open(url: "sqlite://:memory:", relativeTo: elsewhere.url.path)
        try await memory.migrate()
        try await memory.createTenant(Fixture.tenant("a"))
        #expect(try await memory.tenant(named: "a") != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path).isEmpty)
    }

    @Test(arguments: [
        "postgres://relay:s3cret@db.example/relay",
        "mysql://relay:s3cret@db.example/relay",
        "garbage",
        "",
        "sqlite://",
        "sqlite:relay.db",
        "://relay.db",
        "relay:s3cret@db.example://relay",
    ])
    func openRefusesOtherURLs(url: String) throws {
        let error = #expect(throws: StoreError.self) {
            try SQLiteStore.open(url: url, relativeTo: nil)
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("s3cret") == false, "a URL may carry a password; the error never does")
    }

    @Test(.timeLimit(.minutes(1)))
    func unusablePathIsUnavailable() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // A file where the parent folder should be.
        #expect(FileManager.default.createFile(atPath: folder.path("blocker"), contents: Data("x".utf8)))

        let error = #expect(throws: StoreError.self) {
            try SQLiteStore(path: folder.path("blocker/relay.db"))
        }
        #expect(error?.kind == .unavailable)
    }

    @Test(.timeLimit(.minutes(1)))
    func theAcceptedMigrationMovesTicketsAwaitingTheirReceiptOutOfDelivered() async throws {
        let store = try SQLiteStore(path: SQLiteStore.memoryPath)
        // The schema before `v3`, when a push Expo accepted was counted as delivered at once.
        try SQLiteStore.migrator.migrate(store.writer, upTo: "v2")
        let (first, second) = (Fixture.t0, Fixture.date(86_400))
        let (firstDay, secondDay) = (UsageKey.day(of: first), UsageKey.day(of: second))
        let receipts = [
            Fixture.receipt("a", provider: .expo, expoTicketID: "A", createdAt: first),
            Fixture.receipt("b", provider: .expo, expoTicketID: "B", createdAt: first),
            Fixture.receipt("c", provider: .expo, expoTicketID: "C", createdAt: second),
            Fixture.receipt("done", provider: .expo, status: .ok, createdAt: first),
            Fixture.receipt("apns", createdAt: first),
        ]
        try await store.writer.write { db in
            // Written as a relay of that schema wrote them: without the columns later migrations add (`app`).
            for receipt in receipts {
                try db.execute(
                    sql: """
                        INSERT INTO receipts (id, tenant_id, key_id, provider, token_fingerprint, is_critical, status,
                            error_code, message, remove_token, provider_message_id, expo_ticket_id, created_at,
                            updated_at, expires_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        receipt.id, receipt.tenantID, receipt.keyID, receipt.provider.rawValue,
                        receipt.tokenFingerprint, receipt.isCritical, receipt.status.rawValue, receipt.errorCode,
                        receipt.message, receipt.removeToken, receipt.providerMessageID, receipt.expoTicketID,
                        receipt.createdAt.timeIntervalSince1970, receipt.updatedAt.timeIntervalSince1970,
                        receipt.expiresAt.timeIntervalSince1970,
                    ]
                )
            }
        }
        try await store.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO usage_daily (tenant_id, day, provider, delivered) VALUES
                        ('tenant-a', ?, 'expo', 5), ('tenant-a', ?, 'expo', 1), ('tenant-a', ?, 'apns', 3)
                    """,
                arguments: [firstDay, secondDay, firstDay]
            )
        }
        try await store.migrate()
        #expect(
            try await store.usage(tenantID: "tenant-a", fromDay: firstDay) == [
                UsageRow(day: firstDay, provider: .apns, counts: UsageCounts(delivered: 3)),
                UsageRow(day: firstDay, provider: .expo, counts: UsageCounts(delivered: 3, accepted: 2)),
                UsageRow(day: secondDay, provider: .expo, counts: UsageCounts(accepted: 1)),
            ]
        )
        // The receipts then move them as they would have moved pushes accepted after the upgrade.
        #expect(try await store.closeExpoReceipt(ticketID: "C", outcome: .delivered(providerMessageID: "C")))
        #expect(
            try await store.usage(tenantID: "tenant-a", fromDay: secondDay).map(\.counts) == [UsageCounts(delivered: 1)]
        )
    }

    @Test(.timeLimit(.minutes(1)))
    func receiptsWrittenBeforeTheLiveActivityEventReadBackWithoutOne() async throws {
        let store = try SQLiteStore(path: SQLiteStore.memoryPath)
        // The schema before `receipt_live_activity_event`.
        try SQLiteStore.migrator.migrate(store.writer, upTo: "apps")
        let old = {
            var receipt = Fixture.receipt("old", status: .ok)
            receipt.app = "beta"
            return receipt
        }()
        try await store.writer.write { db in
            // Written as a relay of that schema wrote it: without `live_activity_event`.
            try db.execute(
                sql: """
                    INSERT INTO receipts (id, tenant_id, key_id, provider, token_fingerprint, is_critical, status,
                        error_code, message, remove_token, provider_message_id, expo_ticket_id, created_at,
                        updated_at, expires_at, app)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    old.id, old.tenantID, old.keyID, old.provider.rawValue, old.tokenFingerprint, old.isCritical,
                    old.status.rawValue, old.errorCode, old.message, old.removeToken, old.providerMessageID,
                    old.expoTicketID, old.createdAt.timeIntervalSince1970, old.updatedAt.timeIntervalSince1970,
                    old.expiresAt.timeIntervalSince1970, old.app,
                ]
            )
        }
        try await store.migrate()
        #expect(try await store.receipts(ids: ["old"], tenantID: "tenant-a") == [old])
        var new = Fixture.receipt("new")
        new.liveActivityEvent = .start
        try await store.commit(StoreBatch(receipts: [new]))
        #expect(try await store.receipts(ids: ["old", "new"], tenantID: "tenant-a") == [old, new])
    }

    @Test(.timeLimit(.minutes(1)))
    func criticalReserveSurvivesReopeningTheFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("relay.db")
        let hour: Int64 = 486_111
        do {
            let store = try SQLiteStore(path: path)
            try await store.migrate()
            #expect(try await store.takeCriticalReserve(tenantID: "t", hour: hour, count: 7, limit: 10) == 7)
        }
        let reopened = try SQLiteStore(path: path)
        try await reopened.migrate()
        #expect(try await reopened.criticalReserveUsed(tenantID: "t", hour: hour) == 7)
        #expect(try await reopened.takeCriticalReserve(tenantID: "t", hour: hour, count: 7, limit: 10) == 3)
    }

    /// Two stores on one file, as a relay and a second process would be: together they never take more than the limit.
    @Test(.timeLimit(.minutes(1)))
    func storesOnOneFileShareTheCriticalReserve() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let stores = [try SQLiteStore(path: folder.path("relay.db")), try SQLiteStore(path: folder.path("relay.db"))]
        for store in stores { try await store.migrate() }
        let granted = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<30 {
                group.addTask {
                    try await stores[index % 2].takeCriticalReserve(tenantID: "t", hour: 486_111, count: 2, limit: 25)
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(granted == 25)
        #expect(try await stores[0].criticalReserveUsed(tenantID: "t", hour: 486_111) == 25)
    }

    @Test(.timeLimit(.minutes(1)))
    func tenantsAndUsageWrittenBeforeTheCriticalReserveReadBackWithItsDefault() async throws {
        let store = try SQLiteStore(path: SQLiteStore.memoryPath)
        // The schema before `critical_reserve`.
        try SQLiteStore.migrator.migrate(store.writer, upTo: "receipt_live_activity_event")
        let day = UsageKey.day(of: Fixture.t0)
        try await store.writer.write { db in
            // Written as a relay of that schema wrote them: without `critical_reserve_per_hour` and `critical`.
            try db.execute(
                sql: """
                    INSERT INTO tenants (id, name, rate_per_second, burst, daily_quota, per_device_per_minute,
                        allow_critical_alerts, disabled, created_at)
                    VALUES ('tenant-a', 'a', 10, 100, 100000, 30, 1, 0, ?)
                    """,
                arguments: [Fixture.t0.timeIntervalSince1970]
            )
            try db.execute(
                sql: "INSERT INTO usage_daily (tenant_id, day, provider, delivered) VALUES ('tenant-a', ?, 'apns', 4)",
                arguments: [day]
            )
        }
        try await store.migrate()
        let tenant = try #require(try await store.tenant(id: "tenant-a"))
        #expect(tenant.limits == RateLimits(criticalReservePerHour: 120))
        #expect(tenant == Tenant(id: "tenant-a", name: "a", allowCriticalAlerts: true, createdAt: Fixture.t0))
        #expect(
            try await store.usage(tenantID: "tenant-a", fromDay: day) == [
                UsageRow(day: day, provider: .apns, counts: UsageCounts(delivered: 4))
            ])
    }

    @Test("The writer checkpoints every 250 pages of WAL, not SQLite's 1,000", .timeLimit(.minutes(1)))
    func checkpointThreshold() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try SQLiteStore(path: folder.path("relay.db"))
        try await store.migrate()
        let threshold = try await store.writer.write { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") }
        #expect(threshold == 250)
        #expect(SQLiteStore.checkpointPages == 250)
    }
}
