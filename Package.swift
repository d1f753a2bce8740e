// swift-tools-version:6.0
import PackageDescription

// Warnings fail CI through `scripts/test` (it rejects any warning in the project's own files), not through
// unsafeFlags, which would make the package unusable as a dependency.
let package = Package(
    name: "storerecon",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "storerecon", targets: ["storerecon"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Civil dates, US-Pacific days and typed months: the one calendar every module below uses. No dependencies.
        .target(name: "StoreCalendar"),

        // PostgreSQL through libpq.
        .systemLibrary(
            name: "CLibPQ",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "Postgres",
            dependencies: ["CLibPQ", "StoreCalendar"]
        ),
        // zip and gzip reading (the stores' financial reports) through zlib.
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // glibc's malloc_trim: a long sync gives the memory it freed back to the system (Linux only).
        .systemLibrary(name: "CMalloc"),

        // sql/*.sql compiled into the binary.
        .executableTarget(
            name: "embed-migrations",
            path: "Plugins/EmbedMigrationsTool"
        ),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["embed-migrations"]
        ),

        // Store access: transport (libcurl, reached through a small C shim), shared quota, clients.
        .target(
            name: "CCurl",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        .target(
            name: "StoreHTTP",
            dependencies: ["CCurl"]
        ),
        .target(
            name: "RateLimiting",
            dependencies: [
                "Postgres",
                "StoreCalendar",
                "StoreHTTP",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "quota-probe",
            dependencies: [
                "RateLimiting",
                "Postgres",
                "Reconciler",
                "PlayDeveloperAPI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "verify-probe",
            dependencies: [
                "AppStoreServerAPI",
                "RateLimiting",
                "Reconciler",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "AppStoreServerAPI",
            dependencies: [
                "StoreHTTP",
                "RateLimiting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "PlayDeveloperAPI",
            dependencies: [
                "StoreCalendar",
                "StoreHTTP",
                "RateLimiting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The refund ledger: the vocabulary, the typed record, the pure store mappings and order pricing, and the
        // only writer of `refund`, `google_order` and `quarantine`. No YAML, no job.
        .target(
            name: "Ledger",
            dependencies: [
                "Postgres",
                "PlayDeveloperAPI",
                "AppStoreServerAPI",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The stores' financial reports: fetch (Cloud Storage, App Store Connect), parse, store (`payout_report`).
        .target(
            name: "Payouts",
            dependencies: [
                "CZlib",
                "Postgres",
                "StoreCalendar",
                "StoreHTTP",
                "RateLimiting",
                "PlayDeveloperAPI",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The jobs, reports and the command line.
        .target(
            name: "Reports",
            dependencies: ["Postgres", "Ledger", "StoreCalendar"]
        ),
        .target(
            name: "Reconciler",
            dependencies: [
                "Ledger",
                "Postgres",
                "StoreHTTP",
                "RateLimiting",
                "PlayDeveloperAPI",
                "AppStoreServerAPI",
                "Payouts",
                "StoreCalendar",
                .target(name: "CMalloc", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            plugins: ["EmbedMigrations"]
        ),
        .executableTarget(
            name: "storerecon",
            dependencies: [
                "Reconciler",
                "Ledger",
                "Reports",
                "Payouts",
                "RateLimiting",
                "Postgres",
                "StoreCalendar",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The store simulator: Apple and Google on loopback, for tests, benchmarks and the demo. It shares no model or
        // JSON code with the clients above, so a client bug cannot hide behind a matching simulator bug.
        .target(
            name: "StoreSimulator",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),

        .executableTarget(
            name: "storesim",
            dependencies: [
                "StoreSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Tests.
        .target(
            name: "TestSupport",
            dependencies: ["Postgres", "Reconciler", "StoreSimulator"]
        ),
        .testTarget(
            name: "StoreSimulatorTests",
            dependencies: [
                "StoreSimulator",
                "Reconciler",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(
            name: "StoreCalendarTests",
            dependencies: ["StoreCalendar"]
        ),
        .testTarget(
            name: "PostgresTests",
            dependencies: ["Postgres", "TestSupport"]
        ),
        .testTarget(
            name: "RateLimitingTests",
            dependencies: ["RateLimiting", "Postgres", "Reconciler", "TestSupport", "StoreSimulator", "quota-probe"]
        ),
        .testTarget(
            name: "AppStoreServerAPITests",
            dependencies: [
                "AppStoreServerAPI",
                "StoreHTTP",
                "RateLimiting",
                "StoreSimulator",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(
            name: "PlayDeveloperAPITests",
            dependencies: [
                "PlayDeveloperAPI",
                "StoreHTTP",
                "RateLimiting",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "ReconcilerTests",
            dependencies: [
                "Reconciler", "Ledger", "Postgres", "TestSupport", "StoreSimulator", "RateLimiting", "PlayDeveloperAPI",
                "AppStoreServerAPI", "StoreHTTP", "Reports",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LedgerTests",
            dependencies: [
                "Ledger", "Postgres", "PlayDeveloperAPI", "AppStoreServerAPI", "TestSupport", "Reconciler",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ReportsTests",
            dependencies: ["Reports", "Reconciler", "Postgres", "StoreCalendar", "TestSupport"]
        ),
        .testTarget(
            name: "PayoutsTests",
            dependencies: [
                "Payouts", "Reports", "Reconciler", "Postgres", "StoreCalendar", "TestSupport", "StoreSimulator",
                "RateLimiting",
                "PlayDeveloperAPI", "StoreHTTP", .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Postgres", "TestSupport", "StoreSimulator"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
