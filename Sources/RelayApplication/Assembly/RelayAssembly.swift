import Crypto
import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2
package import RelayProviders
package import RelayStore
import RelayStorePostgres
package import ServiceLifecycle

/// A running relay's parts, built from its configuration: the store, one HTTP/2 client per app and provider, the
/// senders and their credentials, the ``Relay``, and the background services.
///
/// ### Overview
/// The one place that turns a loaded ``RelayConfiguration`` into objects. `pushrelay serve` and `pushrelay demo` call
/// ``openStore(_:)`` and ``make(configuration:store:logger:environment:expoReceiptDelay:)``, then hand ``relay`` and
/// ``services`` to the HTTP layer (`RelayServer`'s `buildApplication`), which adds its listener and runs the relay's
/// own queues (``CommitQueue``, ``DeliveryQueue``) after these services. Nothing here speaks HTTP to callers, so a
/// test can build a relay from a configuration file and push through it without a server.
///
/// ### Implementation
/// - A provider is configured when its section has credentials (`[apns] key_file`, `[fcm] service_account_file`);
///   Expo needs none and is always there for the default app (for an `[apps.<name>]` app, when it has an `expo`
///   section). Each app's configured providers get their own ``HTTP2Client`` (its own pools, from `[upstream]`) and
///   their own token caches, so one provider's connection limits never starve another's, and nothing of one app
///   travels on another's connection (``AppSenders``). Each app with Expo has its own receipt poller.
/// - ``services`` is in start order; a service group stops them in reverse, so the clients, listed first, close last,
///   after the delivery queue has drained and the last outcomes are committed. With PostgreSQL, its pool's service
///   comes before even the clients: the store closes after everything that writes to it.
/// - The configuration was validated when it loaded; what can still fail here (a store that does not open, a key
///   that does not load) is a ``RelayAssemblyError`` naming the key.
package struct RelayAssembly: Sendable {
    package let relay: Relay
    /// Every app's HTTP/2 clients, one per app and provider.
    package let clients: [AppClient]
    /// Start order; see the type's overview.
    package let services: [any Service]
    /// The default app's Expo receipt poller.
    package let expoReceipts: ExpoReceiptPoller
    /// The receipt pollers of the other apps with Expo, by app.
    package let appExpoReceipts: [String: ExpoReceiptPoller]

    /// Opens the store named by `[store] url` and runs its migrations. A PostgreSQL database that does not accept
    /// connections yet is waited for, with exponential back-off, up to `[store] connect_timeout_seconds`, each wait
    /// logged as a warning (`Waiting for the store`).
    ///
    /// - Throws: ``RelayAssemblyError`` naming `store.url` when the URL names no store or the store does not open
    ///   (for PostgreSQL: no connection within the timeout, naming the address) or migrate. The message never
    ///   quotes the URL, which may hold a password.
    ///
    /// - Parameter connectAttemptTimeout: How long one try waits for a PostgreSQL connection; `nil`, the store's 5 s
    ///   (tests shorten it).
    package static func openStore(
        _ configuration: RelayConfiguration,
        logger: Logger = Logger(label: "pushrelay.store"),
        connectAttemptTimeout: Duration? = nil
    ) async throws(RelayAssemblyError) -> any PushStore {
        let store: any PushStore
        do {
            switch configuration.store.location {
            case .sqlite(let path)?:
                if let problem = configuration.store.folderProblem { throw RelayAssemblyError.storeFolder(problem) }
                store = try SQLiteStore(path: path)
            case .sqliteInMemory?: store = try SQLiteStore(path: SQLiteStore.memoryPath)
            case .postgres(let url)?:
                let postgres = try PostgresStore(url: url, logger: logger)
                // Its connection pool runs from now on (the migrations need it) until the process ends, or until
                // `PostgresStoreService`, listed first among the services, closes it after everything else.
                postgres.start()
                let address = "\(postgres.configuration.host):\(postgres.configuration.port)"
                try await postgres.waitUntilReachable(
                    within: .seconds(configuration.store.connectTimeoutSeconds),
                    attemptTimeout: connectAttemptTimeout ?? PostgresStore.connectAttemptTimeout
                ) { wait in
                    logger.warning(
                        "Waiting for the store",
                        metadata: [
                            "store.address": "\(address)", "store.attempt": .stringConvertible(wait.attempt),
                            "store.waited_seconds": .stringConvertible(wait.waited.components.seconds),
                            "store.retry_in_seconds": .stringConvertible(wait.retryIn.components.seconds),
                            "store.connect_timeout_seconds": .stringConvertible(
                                configuration.store.connectTimeoutSeconds),
                            "error": "\(wait.reason)",
                        ])
                }
                store = postgres
            case nil:
                throw RelayAssemblyError.notAStoreURL
            }
        } catch let error as RelayAssemblyError {
            throw error
        } catch {
            throw .storeUnavailable(error)
        }
        do {
            try await store.migrate()
        } catch {
            throw .storeNotMigrated(error)
        }
        return store
    }

    /// The `[upstream]` settings as one provider's pool configuration.
    package static func poolConfiguration(
        _ upstream: RelayConfiguration.Upstream,
        for provider: Provider
    ) -> HTTP2PoolConfiguration {
        let backend: HTTP2Backend =
            switch upstream.transport {
            case .nghttp2: .nghttp2
            case .curl: .curl
            }
        return HTTP2PoolConfiguration(
            backend: backend,
            proxy: upstream.proxy?.url.value,
            maxConnections: upstream.maxConnections,
            maxConcurrentStreams: upstream.concurrentStreams(for: provider),
            requestTimeout: .milliseconds(upstream.timeoutMs),
            maxIdleAge: .seconds(upstream.idleTimeoutSeconds),
            maxLifetime: .seconds(upstream.maxConnectionAgeSeconds),
            pingInterval: upstream.pingIntervalSeconds == 0 ? nil : .seconds(upstream.pingIntervalSeconds),
            pingTimeout: .seconds(upstream.pingTimeoutSeconds),
            caFile: upstream.caFile
        )
    }

    /// Builds the relay over `store` (from ``openStore(_:)``).
    ///
    /// - Parameters:
    ///   - clock: The relay's clock, for its delivery, commit queue and maintenance; tests may pass a manual one.
    ///   - environment: The senders' clock and sleep; tests and benchmarks may pass their own.
    ///   - expoReceiptDelay: How long after Expo accepts a ticket its receipt is first asked for; `nil` takes
    ///     `[expo] receipt_delay_seconds` (`pushrelay demo` asks at once).
    /// - Throws: ``RelayAssemblyError`` naming `apns.key_file` or `fcm.service_account_file` (or an app's,
    ///   `apps.beta.apns.key_file`) when a credential the configuration accepted does not load.
    package static func make(
        configuration: RelayConfiguration,
        store: any PushStore,
        logger: Logger,
        clock: RelayClock = .system,
        environment: SenderEnvironment = .live,
        expoReceiptDelay: Duration? = nil
    ) throws(RelayAssemblyError) -> RelayAssembly {
        // Transient failures are retried until each push's deadline, within `retry_window_seconds`; `max_attempts`
        // is deprecated and has no effect (Docs/configuration.md). An attempt sent and not answered in time may have
        // been delivered: it goes again at most `max_attempts_after_timeout` times.
        let retry = RetryPolicy(window: .seconds(configuration.upstream.retryWindowSeconds))
        var clients: [AppClient] = []
        var appSenders: [String: [Provider: any PushSender]] = [:]
        for (name, app) in configuration.allApps.sorted(by: { $0.key < $1.key }) {
            appSenders[name] = try senders(
                for: app, named: name, configuration: configuration, retry: retry, environment: environment,
                logger: logger, clients: &clients)
        }

        let relay = Relay(
            store: store,
            senders: appSenders[AppName.default] ?? [:],
            apps: appSenders,
            settings: settings(configuration),
            queue: DeliveryQueue(
                clock: clock,
                capacity: configuration.server.maxPendingNotifications,
                drainTimeout: .seconds(configuration.server.drainSeconds)
            ),
            commits: CommitQueue(
                store: store, settings: configuration.audit.logSettings,
                unsavedLimit: configuration.store.unsavedLimit, logger: logger, clock: clock),
            rateLimitLeases: store as? PostgresStore,
            logger: logger,
            clock: clock,
            journal: try journalSettings(configuration)
        )
        // One receipt poller per app with Expo: each asks with its app's endpoint and access token, for its app's
        // tickets only.
        let delay = expoReceiptDelay ?? .seconds(configuration.expo.receiptDelaySeconds)
        func poller(app: String, expo: ExpoSenderConfiguration, client: HTTP2Client) -> ExpoReceiptPoller {
            ExpoReceiptPoller(
                configuration: expo,
                store: AuditedExpoReceipts(relay: relay, app: app),
                client: client,
                delay: delay,
                environment: environment,
                logger: logger
            )
        }
        var pollers: [String: ExpoReceiptPoller] = [:]
        for entry in clients where entry.provider == .expo {
            guard let expo = entry.expo else { continue }
            pollers[entry.app] = poller(app: entry.app, expo: expo, client: entry.client)
        }
        let defaultPoller: ExpoReceiptPoller
        if let made = pollers[AppName.default] {
            defaultPoller = made
        } else {
            // Not reached (the default app always has Expo), but made rather than trapping.
            let fallback = defaultExpoClient(configuration: configuration, clients: &clients)
            defaultPoller = poller(app: AppName.default, expo: fallback.configuration, client: fallback.client)
        }
        let otherPollers = pollers.filter { $0.key != AppName.default }.sorted { $0.key < $1.key }.map(\.value)
        // Start order; they stop in reverse, after the delivery queue has drained: the clients close last.
        var services: [any Service] = [
            ClientShutdownService(clients: clients.map(\.client)),
            MaintenanceService(
                relay: relay, auditRetention: auditRetention(configuration, store: store), logger: logger),
        ]
        services += ([defaultPoller] + otherPollers).map { ExpoReceiptService(poller: $0) as any Service }
        services.append(JournalService(relay: relay, logger: logger))
        // First, so that it stops last: the PostgreSQL pool closes after the final receipts and key usage are written.
        if let postgres = store as? PostgresStore { services.insert(PostgresStoreService(store: postgres), at: 0) }
        return RelayAssembly(
            relay: relay, clients: clients, services: services, expoReceipts: defaultPoller,
            appExpoReceipts: pollers.filter { $0.key != AppName.default })
    }

    /// The delivery journal: its key (`[store] journal_key_file`, or the one kept beside a SQLite database, made now
    /// when missing; a random one for a store in memory) and this instance's name (`[audit] instance`).
    ///
    /// - Throws: ``RelayAssemblyError`` naming `store.journal_key_file` when the key cannot be read or made.
    package static func journalSettings(_ configuration: RelayConfiguration) throws(RelayAssemblyError)
        -> JournalSettings
    {
        let store = configuration.store
        let key: JournalKey
        if let configured = store.configuredJournalKey {
            key = configured
        } else if let path = store.journalKeyPath {
            do {
                key = try JournalKey.loadOrCreate(path: path)
            } catch {
                throw .journalKeyUnusable(error)
            }
        } else if case .postgres? = store.location {
            throw .journalKeyMissing
        } else {
            // In memory: the journal goes with the process, and so may its key.
            key = .random()
        }
        // A notification may be sent after a restart as long as the retry loop would have kept trying it.
        return JournalSettings(
            key: key,
            instance: configuration.audit.instance,
            resumeWindow: .seconds(configuration.upstream.retryWindowSeconds)
        )
    }

    /// How the relay treats requests: `[receipts]`, `[server] trusted_proxies` and `readiness_timeout_ms`, `[limits]`,
    /// `[store] request_timeout_ms`.
    package static func settings(_ configuration: RelayConfiguration) -> RelaySettings {
        RelaySettings(
            waitDeadline: .milliseconds(configuration.receipts.requestDeadlineMs),
            receiptLifetime: TimeInterval(configuration.receipts.ttlHours) * 3600,
            trustedProxies: TrustedProxies(configuration.server.trustedProxies),
            tenantDefaults: configuration.limits,
            criticalPerDevicePerMinute: configuration.criticalPerDevicePerMinute,
            apps: Set(configuration.appNames),
            readinessTimeout: .milliseconds(configuration.server.readinessTimeoutMs),
            storeRequestTimeout: .milliseconds(configuration.store.requestTimeoutMs)
        )
    }

    /// The daily pruning of this instance's audit chains (its own and its command-line tools'); `nil` when the audit
    /// log is off.
    package static func auditRetention(_ configuration: RelayConfiguration, store: any PushStore) -> AuditRetention? {
        guard configuration.audit.enabled else { return nil }
        return AuditRetention(
            store: store,
            retention: configuration.audit.retention,
            signingKey: configuration.audit.auditSigningKey,
            chains: [configuration.audit.instance, configuration.audit.cliChain]
        )
    }

    /// Pool gauges for `/metrics`, read at scrape time.
    package func poolStatistics() -> [(provider: Provider, statistics: HTTP2PoolStatistics)] {
        clients.flatMap { entry in entry.client.statistics.values.map { (entry.provider, $0) } }
    }

    /// One app's HTTP/2 client for one provider, and the Expo sender's settings (for the receipt poller).
    package struct AppClient: Sendable {
        package var app: String
        package var provider: Provider
        package var client: HTTP2Client
        var expo: ExpoSenderConfiguration?
    }

    /// One app's senders, each with its own HTTP/2 client and credentials (token caches), so that nothing of one app
    /// travels on another's connection or is signed with another's key.
    ///
    /// - Throws: ``RelayAssemblyError`` naming the app's `apns.key_file` or `fcm.service_account_file`.
    private static func senders(
        for app: RelayConfiguration.App,
        named name: String,
        configuration: RelayConfiguration,
        retry: RetryPolicy,
        environment: SenderEnvironment,
        logger: Logger,
        clients: inout [AppClient]
    ) throws(RelayAssemblyError) -> [Provider: any PushSender] {
        let payload = PayloadSettings(
            apnsTopic: app.apns?.topic ?? "",
            apnsDefaultEnvironment: app.apns?.environment ?? .production,
            androidCriticalChannelId: configuration.android.criticalChannelID,
            fcmProjectId: app.fcm?.projectID ?? ""
        )
        func client(_ provider: Provider, expo: ExpoSenderConfiguration? = nil) -> HTTP2Client {
            let made = HTTP2Client(configuration: poolConfiguration(configuration.upstream, for: provider))
            clients.append(AppClient(app: name, provider: provider, client: made, expo: expo))
            return made
        }
        var senders: [Provider: any PushSender] = [:]
        if let apns = app.apns {
            let key: P256.Signing.PrivateKey
            do {
                key = try APNsTokenProvider.loadKey(pem: apns.keyPEM.value)
            } catch {
                throw .apnsKeyUnusable(error, app: name)
            }
            senders[.apns] = APNsSender(
                upstream: APNsUpstream(
                    configuration: APNsSenderConfiguration(
                        payload: payload,
                        productionEndpoint: apns.endpoint,
                        sandboxEndpoint: apns.sandboxEndpoint
                    ),
                    tokens: APNsTokenProvider(teamID: apns.teamID, keyID: apns.keyID, key: key, now: environment.now),
                    client: client(.apns)
                ),
                retries: RetryLoop(
                    policy: retry, maxAttemptsAfterTimeout: configuration.upstream.maxAttemptsAfterTimeout),
                environment: environment,
                logger: logger
            )
        }
        if let fcm = app.fcm {
            let fcmClient = client(.fcm)
            let tokens: FCMAccessTokenProvider
            do {
                tokens = try FCMAccessTokenProvider(
                    account: fcm.serviceAccount, client: fcmClient, now: environment.now)
            } catch {
                throw .fcmServiceAccountUnusable(error, app: name)
            }
            senders[.fcm] = FCMSender(
                upstream: FCMUpstream(
                    configuration: FCMSenderConfiguration(payload: payload, endpoint: fcm.endpoint),
                    tokens: tokens,
                    client: fcmClient
                ),
                retries: RetryLoop(
                    policy: retry, maxAttemptsAfterTimeout: configuration.upstream.maxAttemptsAfterTimeout),
                environment: environment,
                logger: logger
            )
        }
        if let expo = app.expo {
            let expoConfiguration = ExpoSenderConfiguration(
                payload: payload,
                endpoint: expo.endpoint,
                accessToken: expo.accessToken?.value
            )
            senders[.expo] = ExpoSender(
                upstream: ExpoUpstream(
                    configuration: expoConfiguration, client: client(.expo, expo: expoConfiguration)),
                retries: RetryLoop(
                    policy: retry, maxAttemptsAfterTimeout: configuration.upstream.maxAttemptsAfterTimeout),
                environment: environment,
                logger: logger
            )
        }
        return senders
    }

    /// An Expo client and settings for the default app's receipt poller when the default app has no Expo sender.
    private static func defaultExpoClient(
        configuration: RelayConfiguration,
        clients: inout [AppClient]
    ) -> (configuration: ExpoSenderConfiguration, client: HTTP2Client) {
        let expo = ExpoSenderConfiguration(
            payload: PayloadSettings(
                apnsTopic: "", apnsDefaultEnvironment: .production,
                androidCriticalChannelId: configuration.android.criticalChannelID, fcmProjectId: ""),
            endpoint: configuration.expo.endpoint,
            accessToken: configuration.expo.accessToken?.value
        )
        let client = HTTP2Client(configuration: poolConfiguration(configuration.upstream, for: .expo))
        clients.append(AppClient(app: AppName.default, provider: .expo, client: client, expo: expo))
        return (expo, client)
    }
}
