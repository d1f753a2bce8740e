// swift-tools-version:6.0
import PackageDescription

// Warnings are errors in CI through `scripts/test` (`-Xswiftc -warnings-as-errors`), not here:
// unsafeFlags would make the package unusable as a dependency.
let package = Package(
    name: "storerecon",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "storerecon", targets: ["storerecon"]),
        .executable(name: "storesim", targets: ["storesim"]),
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
        .systemLibrary(
            name: "CLibPQ",
            providers: [.apt(["libpq-dev"])]
        ),
        .target(
            name: "Postgres",
            dependencies: ["CLibPQ"]
        ),
        .executableTarget(
            name: "embed-migrations",
            path: "Plugins/EmbedMigrationsTool"
        ),
        .plugin(
            name: "EmbedMigrations",
            capability: .buildTool(),
            dependencies: ["embed-migrations"]
        ),
        .target(
            name: "StoreHTTP"
        ),
        .target(
            name: "RateLimiting",
            dependencies: ["Postgres"]
        ),
        .target(
            name: "Reconciler",
            dependencies: [
                "Postgres",
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
                "Postgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Postgres", "Reconciler"]
        ),
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
            name: "PostgresTests",
            dependencies: ["Postgres", "TestSupport"]
        ),
        .testTarget(
            name: "ReconcilerTests",
            dependencies: ["Reconciler", "Postgres", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
