import Foundation
import PostgresNIO
import RelayCore
import RelayStore
import Testing

@testable import RelayStorePostgres

/// How `store.url` becomes a connection; no server needed.
@Suite struct PostgresStoreConfigurationTests {
    @Test func fullURLIsParsed() throws {
        let configuration = try PostgresStoreConfiguration(
            url: "postgresql://relay:s%40cret%2Fx@db.example:6543/pushrelay?sslmode=verify-full&search_path=relay_a"
                + "&pool_max=4&sslrootcert=/etc/ca.pem"
        )
        #expect(
            configuration
                == PostgresStoreConfiguration(
                    host: "db.example",
                    port: 6543,
                    username: "relay",
                    password: "s@cret/x",
                    database: "pushrelay",
                    tls: .verifyFull,
                    rootCertificateFile: "/etc/ca.pem",
                    schema: "relay_a",
                    maximumConnections: 4
                )
        )
        #expect(!configuration.description.contains("cret"), "the password is never shown")
        #expect(configuration.description.contains("redacted"))
    }

    @Test func defaultsFollowPsql() throws {
        let configuration = try PostgresStoreConfiguration(url: "postgres://pushrelay@127.0.0.1")
        #expect(configuration.port == 5432)
        #expect(configuration.database == "pushrelay", "the user's name, as psql")
        #expect(configuration.password == nil)
        #expect(configuration.tls == .prefer)
        #expect(configuration.schema == nil)
    }

    @Test(arguments: [
        "sqlite://relay.db",
        "postgres://127.0.0.1:5432/db",
        "postgres://user@/db",
        "postgres://user@host/db?sslmode=sometimes",
        "postgres://user@host/db?search_path=Public",
        "postgres://user@host/db?search_path=a;drop",
        "postgres://user@host/db?pool_max=0",
        "postgres://user:hunter2@host/db?color=blue",
    ])
    func unusableURLIsRefusedWithoutQuotingIt(url: String) {
        let error = #expect(throws: StoreError.self) { try PostgresStoreConfiguration(url: url) }
        guard case .unavailable(let message)? = error else { return }
        #expect(!message.contains("hunter2"))
    }
}

/// What only PostgreSQL has to get right: several relays on one database.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable), .timeLimit(.minutes(1)))
struct PostgresStoreTests {
    @Test func relaysMigratingAtOnceApplyEachMigrationOnce() async throws {
        try await PostgresTestDatabase.withStores(count: 4) { stores in
            // The first store migrated already; all migrate again at once, then once more.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { try await store.migrate() } }
                try await group.waitForAll()
            }
            let applied = try await stores[1].appliedMigrations()
            #expect(applied.count == Set(applied).count)
            #expect(applied.first == "v1")
            try await stores[2].migrate()
            #expect(try await stores[3].appliedMigrations() == applied)
        }
    }

    @Test func freshSchemaMigratedByManyRelaysAtOnce() async throws {
        let configuration = try PostgresTestDatabase.configuration()
        let stores = (0..<3).map { _ in PostgresStore(configuration: configuration) }
        for store in stores { store.start() }
        var failure: (any Error)?
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { try await store.migrate() } }
                try await group.waitForAll()
            }
            try await stores[0].createTenant(Fixture.tenant("a"))
            #expect(try await stores[2].tenant(named: "a") == Fixture.tenant("a"))
        } catch {
            failure = error
        }
        try? await stores[0].dropSchema()
        for store in stores { await store.shutdown() }
        if let failure { throw failure }
    }

    @Test func datesRoundTripBitForBit() async throws {
        try await PostgresTestDatabase.withStore { store in
            let created = Date(timeIntervalSince1970: 1_750_000_000.123_456_7)
            let tenant = Tenant(id: "t1", name: "fractional", createdAt: created)
            try await store.createTenant(tenant)
            let stored = try #require(try await store.tenant(id: "t1"))
            #expect(stored.createdAt.timeIntervalSince1970.bitPattern == created.timeIntervalSince1970.bitPattern)
        }
    }

    @Test func relaysAgreeOnOneFingerprintKey() async throws {
        try await PostgresTestDatabase.withStores(count: 3) { stores in
            let keys = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for store in stores { group.addTask { try await store.fingerprintKey() } }
                return try await group.reduce(into: [[UInt8]]()) { $0.append($1) }
            }
            #expect(Set(keys).count == 1)
        }
    }

    @Test func relaysRecordingOneExpoReceiptAtOnceMoveItsUsageOnce() async throws {
        try await PostgresTestDatabase.withStores(count: 2) { stores in
            let tickets = (0..<20).map { "T\($0)" }
            var ticketTime = StoreBatch(
                receipts: tickets.map { Fixture.receipt("r-\($0)", provider: .expo, expoTicketID: $0) }
            )
            let key = UsageKey(tenantID: "tenant-a", date: Fixture.t0, provider: .expo)
            ticketTime.count(UsageCounts(accepted: tickets.count), for: key)
            try await stores[0].commit(ticketTime)
            let dead = DeliveryOutcome.tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
            // Both relays fetched the same receipts and record them at once: each receipt is closed by one of them.
            let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for ticket in tickets {
                    for store in stores {
                        group.addTask { try await store.closeExpoReceipt(ticketID: ticket, outcome: dead) }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(closed == tickets.count)
            #expect(
                try await stores[1].usage(tenantID: "tenant-a", fromDay: key.day).map(\.counts)
                    == [UsageCounts(tokenInvalid: tickets.count)]
            )
        }
    }

    @Test func theAcceptedMigrationMovesTicketsAwaitingTheirReceiptOutOfDelivered() async throws {
        try await PostgresTestDatabase.withStore { store in
            let (first, second) = (Fixture.t0, Fixture.date(86_400))
            let (firstDay, secondDay) = (UsageKey.day(of: first), UsageKey.day(of: second))
            try await store.commit(
                StoreBatch(receipts: [
                    Fixture.receipt("a", provider: .expo, expoTicketID: "A", createdAt: first),
                    Fixture.receipt("b", provider: .expo, expoTicketID: "B", createdAt: first),
                    Fixture.receipt("c", provider: .expo, expoTicketID: "C", createdAt: second),
                    Fixture.receipt("done", provider: .expo, status: .ok, createdAt: first),
                    Fixture.receipt("apns", createdAt: first),
                ]))
            // Back to the schema before `v3`, when a push Expo accepted was counted as delivered at once (and so
            // before the migrations after it: `apps`, `receipt_live_activity_event`).
            for statement: PostgresQuery in [
                "ALTER TABLE receipts DROP COLUMN live_activity_event",
                "DELETE FROM schema_migrations WHERE name = 'receipt_live_activity_event'",
                "ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey",
                "ALTER TABLE usage_daily DROP COLUMN app",
                "ALTER TABLE usage_daily ADD PRIMARY KEY (tenant_id, day, provider)",
                "ALTER TABLE tenants DROP COLUMN apps, DROP COLUMN default_app",
                "ALTER TABLE receipts DROP COLUMN app",
                "ALTER TABLE audit_records DROP COLUMN app",
                "DELETE FROM schema_migrations WHERE name = 'apps'",
                "ALTER TABLE usage_daily DROP COLUMN accepted",
                "DELETE FROM schema_migrations WHERE name = 'v3'",
            ] {
                try await store.execute(statement)
            }
            try await store.execute(
                """
                INSERT INTO usage_daily (tenant_id, day, provider, delivered) VALUES
                    ('tenant-a', \(firstDay), 'expo', 5), ('tenant-a', \(secondDay), 'expo', 1),
                    ('tenant-a', \(firstDay), 'apns', 3)
                """
            )
            try await store.migrate()
            #expect(
                try await store.appliedMigrations().suffix(3) == ["v3", "apps", "receipt_live_activity_event"])
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
                try await store.usage(tenantID: "tenant-a", fromDay: secondDay).map(\.counts)
                    == [UsageCounts(delivered: 1)]
            )
        }
    }

    @Test func receiptsWrittenBeforeTheLiveActivityEventReadBackWithoutOne() async throws {
        try await PostgresTestDatabase.withStore { store in
            var old = Fixture.receipt("old", status: .ok)
            old.app = "beta"
            try await store.commit(StoreBatch(receipts: [old]))
            // Back to the schema before `receipt_live_activity_event`, with the receipt as a relay of it wrote it.
            try await store.execute("ALTER TABLE receipts DROP COLUMN live_activity_event")
            try await store.execute("DELETE FROM schema_migrations WHERE name = 'receipt_live_activity_event'")
            try await store.migrate()
            #expect(try await store.appliedMigrations().last == "receipt_live_activity_event")
            #expect(try await store.receipts(ids: ["old"], tenantID: "tenant-a") == [old])
            var new = Fixture.receipt("new")
            new.liveActivityEvent = .end
            try await store.commit(StoreBatch(receipts: [new]))
            #expect(try await store.receipts(ids: ["old", "new"], tenantID: "tenant-a") == [old, new])
        }
    }

    @Test func tenantsAndUsageWrittenBeforeTheCriticalReserveReadBackWithItsDefault() async throws {
        try await PostgresTestDatabase.withStore { store in
            let day = UsageKey.day(of: Fixture.t0)
            // Back to the schema before `critical_reserve`, with a tenant and usage as a relay of it wrote them.
            for statement: PostgresQuery in [
                "ALTER TABLE tenants DROP COLUMN critical_reserve_per_hour",
                "ALTER TABLE usage_daily DROP COLUMN critical",
                "DROP TABLE critical_reserve",
                "DELETE FROM schema_migrations WHERE name = 'critical_reserve'",
            ] {
                try await store.execute(statement)
            }
            try await store.execute(
                """
                INSERT INTO tenants (id, name, rate_per_second, burst, daily_quota, per_device_per_minute,
                    allow_critical_alerts, disabled, created_at)
                VALUES ('tenant-a', 'a', 10, 100, 100000, 30, true, false, \(Fixture.t0.timeIntervalSince1970))
                """
            )
            try await store.execute(
                "INSERT INTO usage_daily (tenant_id, day, provider, delivered) VALUES ('tenant-a', \(day), 'apns', 4)"
            )
            try await store.migrate()
            #expect(try await store.appliedMigrations().last == "critical_reserve")
            let tenant = try #require(try await store.tenant(id: "tenant-a"))
            #expect(tenant == Tenant(id: "tenant-a", name: "a", allowCriticalAlerts: true, createdAt: Fixture.t0))
            #expect(tenant.limits.criticalReservePerHour == 120)
            #expect(
                try await store.usage(tenantID: "tenant-a", fromDay: day) == [
                    UsageRow(day: day, provider: .apns, counts: UsageCounts(delivered: 4))
                ])
            #expect(try await store.takeCriticalReserve(tenantID: "tenant-a", hour: 486_111, count: 2, limit: 5) == 2)
        }
    }

    @Test func storeFailsCleanlyAfterShutdown() async throws {
        let store = PostgresStore(configuration: try PostgresTestDatabase.configuration())
        store.start()
        try await store.migrate()
        try await store.dropSchema()
        await store.shutdown()
        await #expect(throws: (any Error).self) { try await store.ping() }
    }

    // MARK: - Rate-limit leases

    @Test func leasesComputeWhatThePureBucketComputes() async throws {
        try await PostgresTestDatabase.withStore { store in
            var model: [String: SharedRateLimitBucket] = [:]
            var generator = SeededGenerator(seed: 42)
            let limitChoices = [
                RateLimits(ratePerSecond: 10, burst: 100, dailyQuota: 1_000, perDevicePerMinute: 1),
                RateLimits(ratePerSecond: 2.5, burst: 7, dailyQuota: 40, perDevicePerMinute: 1),
                RateLimits(ratePerSecond: 1_000, burst: 10, dailyQuota: 100_000, perDevicePerMinute: 1),
            ]
            // Starts shortly before a UTC midnight, so the daily count rolls over on the way.
            var now = 1_750_032_000.0 - 30
            for step in 0..<400 {
                now += Double(UInt64.random(in: 0...40, using: &generator)) / 100
                let tenant = "tenant-\(step % 3)"
                let limits = limitChoices[step % 3]
                let minimum = Int.random(in: 1...5, using: &generator)
                let request = RateLimitLeaseRequest(
                    limits: limits,
                    now: now,
                    minimum: minimum,
                    maximum: minimum + Int.random(in: 0...5, using: &generator),
                    // Now and then a relay gives back what expired unspent, sometimes more than was counted.
                    returned: step % 4 == 0 ? Int.random(in: 0...8, using: &generator) : 0
                )
                let expected = model[tenant, default: SharedRateLimitBucket()].lease(request)
                let grant = try await store.leaseRateLimit(tenantID: tenant, request)
                #expect(grant == expected, "step \(step)")
                if grant != expected { return }
            }
        }
    }

    @Test func concurrentLeasesNeverGrantMoreThanTheBurst() async throws {
        try await PostgresTestDatabase.withStores(count: 2) { stores in
            let limits = RateLimits(ratePerSecond: 1, burst: 100, dailyQuota: 1_000, perDevicePerMinute: 1)
            let request = RateLimitLeaseRequest(limits: limits, now: 1_750_000_000, minimum: 1, maximum: 3)
            let granted = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        try await stores[index % 2].leaseRateLimit(tenantID: "busy", request).granted
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(granted == 100, "60 leases of up to 3 at one instant share a burst of 100 exactly")
        }
    }

    // MARK: - Critical reserve

    /// Two relays, each with its own connection pool, take from one tenant's reserve at once: together exactly the
    /// limit, and each sees what the other took.
    @Test func relaysTakingTheCriticalReserveAtOnceNeverExceedItsLimit() async throws {
        try await PostgresTestDatabase.withStores(count: 2) { stores in
            let hour: Int64 = 486_111
            let granted = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        try await stores[index % 2].takeCriticalReserve(
                            tenantID: "paged", hour: hour, count: 1 + index % 3, limit: 100)
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(granted == 100, "120 asked for at once, 100 to give")
            #expect(try await stores[0].criticalReserveUsed(tenantID: "paged", hour: hour) == 100)
            #expect(try await stores[1].criticalReserveUsed(tenantID: "paged", hour: hour) == 100)
            #expect(
                try await stores[1].takeCriticalReserve(tenantID: "paged", hour: hour + 1, count: 3, limit: 100) == 3)
        }
    }

    /// Two relays, each with its own limiter and connection pool, take turns at twice the tenant's rate over
    /// simulated seconds; the database's bucket keeps their total within 10 % of `rate × time + burst`.
    @Test func twoRelaysOnOneDatabaseStayWithinTheLimits() async throws {
        try await PostgresTestDatabase.withStores(count: 2) { stores in
            let limits = RateLimits(ratePerSecond: 20, burst: 50, dailyQuota: 1_000_000, perDevicePerMinute: 1)
            var relays = [LeasedRateLimiter(limits: limits), LeasedRateLimiter(limits: limits)]
            let t0 = 1_750_000_000.0
            let seconds = 30.0
            let steps = Int(seconds * 40)
            var admitted = 0
            for step in 0..<steps {
                let now = t0 + Double(step) / 40
                let relay = step % 2
                let count = 1 + step % 2
                let decision: TenantRateLimiter.Decision
                switch relays[relay].admit(count, now: now) {
                case .decided(let decided):
                    decision = decided
                case .lease(let lease):
                    let grant = try await stores[relay].leaseRateLimit(tenantID: "shared", lease.request)
                    decision = relays[relay].leaseAnswered(grant, lease, now: now)
                }
                if case .admitted = decision { admitted += count }
            }
            let allowed = limits.ratePerSecond * seconds + Double(limits.burst)
            #expect(Double(admitted) <= allowed * 1.1)
            #expect(Double(admitted) >= allowed * 0.9)
        }
    }
}

/// The delivery journal across instances: a claim is exclusive.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable), .timeLimit(.minutes(1)))
struct PostgresJournalClaimTests {
    @Test func twoStoresClaimingAtOnceNeverBothGetAnEntry() async throws {
        try await PostgresTestDatabase.withStores(count: 2) { stores in
            let ids = (0..<300).map { String(format: "receipt-%03d", $0) }
            try await JournalConformanceTests.journal(
                ids.map { JournalConformanceTests.entry($0, leaseUntil: Fixture.date(10)) }, in: stores[0])
            // Both instances claim in small rounds at once until nothing is left.
            let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        var mine: [String] = []
                        while true {
                            let round = try await store.claimJournal(
                                JournalClaim(
                                    instance: "relay-\(index)", now: Fixture.date(20),
                                    leaseUntil: Fixture.date(80), limit: 7)
                            )
                            if round.isEmpty { return mine }
                            mine += round.map(\.receiptID)
                        }
                    }
                }
                var all: [[String]] = []
                for try await claimed in group { all.append(claimed) }
                return all
            }
            let everything = claimed.flatMap { $0 }
            #expect(everything.count == ids.count, "no entry claimed twice")
            #expect(Set(everything) == Set(ids), "every entry claimed")
            // Until their leases end, nobody takes them again.
            #expect(try await JournalConformanceTests.claimAll(stores[1], by: "relay-9", at: 79).isEmpty)
        }
    }
}

/// Issue 39 item 3: a PostgreSQL error says what happened (SQLSTATE, message, constraint), not postgres-nio's generic
/// sentence, and quotes no value of the row.
@Suite(.enabled(if: PostgresTestDatabase.isAvailable), .timeLimit(.minutes(1)))
struct PostgresStoreErrorTests {
    @Test func aCommitThatCollidesNamesTheConstraint() async throws {
        try await PostgresTestDatabase.withStore { store in
            var chain = AuditChain(chain: "shared-id", head: nil)
            let record = chain.append(
                AuditEntry(timeMillis: 1_800_000_000_000, event: .admin, actor: "test", detail: "secret-ish detail"))
            try await store.commit(StoreBatch(audit: [record]))
            do {
                try await store.commit(StoreBatch(audit: [record]))
                Issue.record("a second record with the same chain and seq was stored")
            } catch {
                let text = "\(error)"
                #expect(text.contains("SQLSTATE 23505"), "\(text)")
                #expect(text.contains("audit_records_chain_seq_key"), "\(text)")
                #expect(!text.contains("Generic description"))
                #expect(!text.contains("shared-id") && !text.contains("secret-ish"), "no value of the row: \(text)")
            }
        }
    }
}
