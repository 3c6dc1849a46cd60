// swift-tools-version:6.2
import PackageDescription

/// One settings list for every target, so that the whole package compiles under the same rules.
let swiftSettings: [SwiftSetting] = [
    // SE-0335: existential types are spelled `any P`, so their cost is visible.
    .enableUpcomingFeature("ExistentialAny"),
    // SE-0444: a file sees only the members of modules it imports itself.
    .enableUpcomingFeature("MemberImportVisibility"),
    // SE-0409: imports are internal unless marked, so no module leaks its dependencies.
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The executables allocate through jemalloc (Debian's libjemalloc-dev; scripts/bootstrap.sh installs it) rather
/// than glibc's malloc, whose arena locking and chunk consolidation cost the relay about a tenth of its CPU time per
/// request under load (Docs/benchmarks.md). Linking it is enough: its `malloc` comes before libc's.
/// Its options are compiled in by the CJemallocConfig target, which both executables depend on.
let jemalloc: [LinkerSetting] = [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]

let package = Package(
    name: "PushRelay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushrelay", targets: ["pushrelay"]),
        .executable(name: "relay-bench", targets: ["relay-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // MARK: - C
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // nghttp2 client sessions over OpenSSL: the upstream transport's fast path (RelayHTTP2/NGHTTP2).
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev", "libssl-dev"])]
        ),

        // MARK: - Libraries
        // Pure logic; swift-crypto only for the audit log's hashes and signatures (computation, no I/O).
        .target(
            name: "RelayCore", dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings),
        .target(
            name: "RelayHTTP2",
            dependencies: [
                "CCurl", "CNGHTTP2",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayProviders",
            dependencies: [
                "RelayCore", "RelayHTTP2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                // The retries by cause and the circuit state of each provider's upstreams.
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayStore",
            dependencies: [
                "RelayCore", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the rows written once per notification (`SQLiteRowWriter`).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayStorePostgres",
            dependencies: [
                "RelayCore", "RelayStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The application core: admission, delivery, the commit queue, authentication, and the wiring that builds a
        // relay from its configuration (stores, HTTP/2 clients, senders). No HTTP server: RelayServer renders it.
        .target(
            name: "RelayApplication",
            dependencies: [
                "RelayCore", "RelayProviders", "RelayStore", "RelayStorePostgres", "RelayHTTP2",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelayServer",
            dependencies: [
                "RelayApplication", "RelayCore", "RelayProviders", "RelayStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RelaySimulator",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        .target(name: "CJemallocConfig"),

        // MARK: - Executables
        .executableTarget(
            name: "pushrelay",
            dependencies: [
                "RelayApplication", "RelayCore", "RelayServer", "RelayStore", "RelayStorePostgres", "RelayProviders",
                "RelayHTTP2", "RelaySimulator", "CJemallocConfig",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // SIGHUP: `serve` reloads the listener's certificate.
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // `pushrelay healthcheck`: one HTTP/1.1 request, over TLS when the relay serves TLS.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: jemalloc
        ),
        .executableTarget(
            name: "relay-bench",
            dependencies: [
                "RelayCore", "RelayHTTP2", "RelaySimulator", "CJemallocConfig",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                // `hostile`: slow TLS clients, written byte by byte.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: jemalloc
        ),

        // MARK: - Tests (each library's test target arrives with the issue that fills the library)
        .testTarget(name: "CCurlTests", dependencies: ["CCurl"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RelayCoreTests",
            dependencies: ["RelayCore", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Fixtures"],  // golden files, read through #filePath
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayHTTP2Tests",
            dependencies: [
                "RelayHTTP2", "CNGHTTP2", "RelaySimulator", .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayStoreTests",
            dependencies: [
                "RelayStore", "RelayStorePostgres", "RelayCore", .product(name: "GRDB", package: "GRDB.swift"),
                // Raw SQL in the PostgreSQL tests (`PostgresQuery`), such as a schema from before a migration.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayApplicationTests",
            dependencies: [
                "RelayApplication", "RelayCore", "RelayStore", "RelayProviders", "RelayHTTP2",
                // The wiring's test builds a relay from a configuration file and pushes through it to the simulator.
                "RelaySimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayServerTests",
            dependencies: [
                "RelayApplication", "RelayServer", "RelaySimulator", "HTTP2TestClient", "RelayHTTP2", "RelayCore",
                "RelayProviders", "RelayStore",
                "RelayStorePostgres",
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                // An HTTP/2 stream's pipeline on an `EmbeddedChannel`: the frames a stream's answer and reset become.
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras"),
                // An HTTP/1.1 connection's pipeline on an `EmbeddedChannel`, fed bytes as they arrive.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                // The listener's timeouts on an `EmbeddedChannel`, whose event loop's time the test advances.
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                // `withMetricsFactory(TestMetrics())`: metrics counted in a test, without bootstrapping.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // The command line's tests: its commands parsed from the tests' own arguments and run on their own stores,
        // next to the admin API (tenant administration through both front ends).
        .testTarget(
            name: "pushrelayTests",
            dependencies: [
                "pushrelay", "RelayApplication", "RelayServer", "RelayCore", "RelayStore",
                // A test CA and certificate for `healthcheck` over TLS, served by the relay's own listener.
                "RelaySimulator",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelayProvidersTests",
            dependencies: [
                "RelayProviders", "RelayHTTP2", "RelaySimulator", .product(name: "Crypto", package: "swift-crypto"),
                // `withMetricsFactory(TestMetrics())`: the retry and circuit metrics, without bootstrapping.
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // An HTTP/2-over-TLS client built from NIO's own client side, shared by the simulator's and the server's tests.
        .target(
            name: "HTTP2TestClient",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/HTTP2TestClient",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RelaySimulatorTests",
            dependencies: [
                "RelaySimulator", "HTTP2TestClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// libFuzzer targets (scripts/fuzz.sh): declared only when RELAY_FUZZ is set, because they call libFuzzer's driver
// (Fuzz/CRelayFuzzMain), which only a build with `-sanitize=fuzzer` links.
if Context.environment["RELAY_FUZZ"] != nil {
    package.targets += [
        .target(name: "CRelayFuzzMain", path: "Fuzz/CRelayFuzzMain"),
        .executableTarget(
            name: "relay-fuzz", dependencies: ["RelayCore", "CRelayFuzzMain"], path: "Fuzz/relay-fuzz",
            swiftSettings: swiftSettings),
    ]
}
