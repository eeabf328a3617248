// swift-tools-version:6.0
import PackageDescription

// Haul runs on Linux only: storage uses copy_file_range, syncfs and fdatasync, the
// embedded database expects a Debian-style PostgreSQL install, and the C shims assume glibc.
let package = Package(
    name: "Haul",
    products: [
        .executable(name: "haul", targets: ["haul"]),
    ],
    targets: [
        // C libraries found through pkg-config; shims wrap what Swift cannot call (variadics, macros).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),

        .target(name: "HaulCore", dependencies: ["CCrypto"]),
        .target(name: "HaulPostgres", dependencies: ["CLibPQ", "CLinux", "HaulCore"]),
        .target(name: "HaulHTTP", dependencies: ["CCurl", "HaulCore"]),
        .target(name: "HaulStorage", dependencies: ["CLinux", "HaulArchive", "HaulCore"]),
        .target(name: "HaulArchive", dependencies: ["CLinux", "CZlib", "HaulCore"]),
        .target(name: "HaulUpload", dependencies: ["CCurl", "HaulHTTP", "HaulCore"]),
        .target(name: "HaulS3", dependencies: ["CCurl", "HaulHTTP", "HaulCore"]),
        .target(name: "HaulMetrics", dependencies: ["CMicroHTTPD", "HaulCore"]),
        .target(name: "HaulMetalink", dependencies: ["HaulCore"]),
        .target(name: "HaulQueue", dependencies: ["HaulPostgres", "HaulCore"], exclude: ["SQL"], plugins: ["EmbedMigrations", "EmbedStatements"]),
        // The S3 storage: objects, multipart uploads, extraction into a bucket.
        .target(name: "HaulS3Storage", dependencies: ["CLinux", "HaulQueue", "HaulS3", "HaulStorage", "HaulArchive", "HaulPostgres", "HaulCore"]),
        .target(name: "HaulWorker", dependencies: ["CLinux", "HaulQueue", "HaulHTTP", "HaulStorage", "HaulArchive", "HaulUpload", "HaulS3", "HaulMetrics", "HaulPostgres", "HaulCore"], exclude: ["SQL"], plugins: ["EmbedStatements"]),
        .target(name: "HaulDashboard", dependencies: ["CCrypto", "HaulMetrics", "HaulQueue", "HaulPostgres", "HaulCore"]),
        .executableTarget(name: "haul", dependencies: ["HaulMetalink", "HaulWorker", "HaulDashboard", "HaulS3", "HaulS3Storage", "HaulMetrics", "HaulQueue", "HaulHTTP", "HaulStorage", "HaulArchive", "HaulUpload", "HaulPostgres", "HaulCore"]),

        .executableTarget(name: "haul-bench", dependencies: ["HaulQueue", "HaulPostgres"], path: "Sources/haul-bench"),
        .executableTarget(name: "embed-migrations", path: "Sources/embed-migrations"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"]),
        // Each SQL statement of a module in its own file, SQL/<Area>/<name>.sql, named in the code as Statements.<Area>.<name>.
        .executableTarget(name: "embed-statements", path: "Sources/embed-statements"),
        .plugin(name: "EmbedStatements", capability: .buildTool(), dependencies: ["embed-statements"]),

        // Helpers every test target shares: the process runner, temporary folders, seeded random.
        .target(name: "HaulTestSupport", path: "Tests/HaulTestSupport"),
        .testTarget(name: "HaulCoreTests", dependencies: ["HaulCore"]),
        .testTarget(name: "HaulQueueTests", dependencies: ["HaulQueue", "HaulPostgres"]),
        .testTarget(name: "HaulHTTPTests", dependencies: ["HaulHTTP", "HaulCore"]),
        .testTarget(name: "HaulIntegrationTests", dependencies: ["HaulTestSupport", "HaulArchive", "HaulCore", "HaulPostgres", "HaulQueue", "HaulStorage", "HaulS3", "HaulS3Storage"], exclude: ["Faults/origin.py", "Faults/hostile_origin.py", "Faults/flaky_s3.py", "Faults/sts_s3.py", "S3/s3check.py", "S3/moto_s3.py"]),
        .testTarget(name: "HaulUploadTests", dependencies: ["HaulTestSupport", "CCurl", "HaulCore", "HaulHTTP", "HaulUpload"], exclude: ["Receivers"]),
        .testTarget(name: "HaulDashboardTests", dependencies: ["HaulTestSupport", "HaulDashboard", "HaulMetrics", "HaulQueue", "HaulCore"]),
        .testTarget(name: "HaulS3Tests", dependencies: ["HaulS3", "HaulCore"]),
        .testTarget(name: "HaulMetalinkTests", dependencies: ["HaulMetalink", "HaulCore"]),
        .testTarget(name: "HaulMetricsTests", dependencies: ["HaulTestSupport", "HaulMetrics", "HaulCore"]),
        .testTarget(name: "HaulArchiveTests", dependencies: ["HaulTestSupport", "HaulArchive", "HaulCore"], exclude: ["Fixtures"]),
        .testTarget(name: "HaulStorageTests", dependencies: ["HaulTestSupport", "HaulStorage"]),
        .testTarget(name: "HaulWorkerTests", dependencies: ["HaulWorker", "HaulS3Storage", "HaulS3", "HaulArchive", "HaulStorage", "HaulCore", "HaulHTTP"]),
    ]
)
