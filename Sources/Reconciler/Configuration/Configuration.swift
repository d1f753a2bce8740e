import Foundation

/// storerecon's configuration file (YAML; JSON is valid YAML), decoded strictly: an unknown key is an error,
/// because a typo must never silently drop a setting.
///
/// Load it with ``ConfigurationLoader``; it substitutes `${NAME}` from the environment and applies
/// `STORERECON_DATABASE_URL`.
public struct Configuration: Decodable, Sendable, Equatable {
    /// Where the database is.
    public var database: DatabaseConfig
    /// The apps to reconcile.
    public var apps: [AppConfig]
    /// Per-app overrides of the stores' published limits, keyed by app id.
    public var limits: [String: LimitsConfig]
    /// The recheck job's window and pace.
    public var recheck: RecheckConfig
    /// Sync job tuning (overlap, skew, backfill share).
    public var sync: SyncConfig
    /// Product tiers and prices, keyed by product id.
    public var products: [String: ProductConfig]
    /// Report settings.
    public var reports: ReportsConfig
    /// What `status` counts as needing attention.
    public var status: StatusConfig
    /// How `run nightly` behaves when another host holds a job's lock.
    public var nightly: NightlyConfig
    /// `refundRequests:` (the rules are per app; this holds what applies to all of them).
    public var refundRequests = RefundRequestsConfig()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case database, apps, limits, recheck, sync, products, reports, status, nightly, refundRequests
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        database = try container.decodeIfPresent(DatabaseConfig.self, forKey: .database) ?? DatabaseConfig()
        apps = try container.decodeIfPresent([AppConfig].self, forKey: .apps) ?? []
        limits = try container.decodeIfPresent([String: LimitsConfig].self, forKey: .limits) ?? [:]
        recheck = try container.decodeIfPresent(RecheckConfig.self, forKey: .recheck) ?? RecheckConfig()
        sync = try container.decodeIfPresent(SyncConfig.self, forKey: .sync) ?? SyncConfig()
        products = try container.decodeIfPresent([String: ProductConfig].self, forKey: .products) ?? [:]
        reports = try container.decodeIfPresent(ReportsConfig.self, forKey: .reports) ?? ReportsConfig()
        status = try container.decodeIfPresent(StatusConfig.self, forKey: .status) ?? StatusConfig()
        nightly = try container.decodeIfPresent(NightlyConfig.self, forKey: .nightly) ?? NightlyConfig()
        refundRequests =
            try container.decodeIfPresent(RefundRequestsConfig.self, forKey: .refundRequests) ?? RefundRequestsConfig()
    }

    /// The app with this id.
    public func app(_ id: String) -> AppConfig? { apps.first { $0.id == id } }

    /// The limits for an app: its overrides over the published defaults.
    public func limits(for app: AppConfig) -> LimitsConfig {
        limits[app.id] ?? LimitsConfig()
    }
}

/// `database:`: how to reach PostgreSQL.
public struct DatabaseConfig: Decodable, Sendable, Equatable {
    /// A libpq conninfo string or URI. May hold a password: it is never printed.
    public var url: String

    enum CodingKeys: String, CodingKey, CaseIterable { case url }

    /// The default: libpq's own defaults and `PG*` variables with database `storerecon`.
    public init(url: String = "postgresql:///storerecon") { self.url = url }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decodeIfPresent(String.self, forKey: .url) ?? "postgresql:///storerecon"
    }
}

/// `recheck:`: which subscriptions are near enough to expiry to ask about, and how many calls run at once.
public struct RecheckConfig: Decodable, Sendable, Equatable {
    /// How far ahead of expiry to start checking (default 72 h).
    public var lead: ConfigDuration
    /// How long after expiry to keep checking (default 24 h).
    public var lag: ConfigDuration
    /// Status calls in flight at once per process (default 4).
    public var concurrency: Int

    enum CodingKeys: String, CodingKey, CaseIterable { case lead, lag, concurrency }

    /// The defaults.
    public init(lead: ConfigDuration = .hours(72), lag: ConfigDuration = .hours(24), concurrency: Int = 4) {
        self.lead = lead
        self.lag = lag
        self.concurrency = concurrency
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lead = try container.decodeIfPresent(ConfigDuration.self, forKey: .lead) ?? .hours(72)
        lag = try container.decodeIfPresent(ConfigDuration.self, forKey: .lag) ?? .hours(24)
        concurrency = try container.decodeIfPresent(Int.self, forKey: .concurrency) ?? 4
    }
}

/// `sync:`: window arithmetic and budget shares of the sync and backfill jobs.
public struct SyncConfig: Decodable, Sendable, Equatable {
    /// How far before the checkpoint each Google window starts again, to catch late-recorded voids (default 1 h).
    public var googleOverlap: ConfigDuration
    /// How far behind now each Google window ends, for the store's own clock skew (default 1 min).
    public var googleSkew: ConfigDuration
    /// The most of a daily budget a backfill may take, 0...1 (default 0.5).
    public var backfillShare: Double
    /// Whether Apple apps fall back to sandbox on 4040010 (default true outside production-only setups).
    public var appleSandboxFallback: Bool
    /// How far before its checkpoint each Apple notification-history window starts again (default 1 h).
    public var appleOverlap: ConfigDuration
    /// Customers not named by any notification whose refund history one run re-reads, the longest unchecked
    /// first (default 1000; 0 turns the sweep off).
    public var appleSweepCustomers: Int
    /// Customers whose refund history one process reads at once, each reader on its own database connection
    /// (default 4). Calls still pass the shared quota one at a time; this only hides each call's latency.
    public var appleConcurrency: Int
    /// How long a customer whose refund history was read is not read again by the sweep or a backfill, in this run
    /// or the next ones (default 20 h: once a night). A new notification naming the customer queues it at once
    /// whatever this says.
    public var appleRecheckAfter: ConfigDuration
    /// Customers queued by a pending `backfill apple-refunds` that one nightly sync reads, after the customers named
    /// by notifications and before the sweep (default 1000; 0 leaves the backfill to the backfill command).
    public var appleBackfillPerNight: Int
    /// The most time slices a Google voided window is split into, each paged by its own token chain with its call
    /// in flight at the same time as the others' (default 12; 1 pages the window as one chain). How many are used
    /// follows the measured call time: one when answers come in milliseconds, this many at a second or more.
    public var googleSlices: Int

    enum CodingKeys: String, CodingKey, CaseIterable {
        case googleOverlap, googleSkew, backfillShare, appleSandboxFallback, appleOverlap, appleSweepCustomers
        case appleConcurrency, googleSlices, appleRecheckAfter, appleBackfillPerNight
    }

    /// The defaults.
    public init() {
        googleOverlap = .hours(1)
        googleSkew = .seconds(60)
        backfillShare = 0.5
        appleSandboxFallback = true
        appleOverlap = .hours(1)
        appleSweepCustomers = 1000
        appleConcurrency = 4
        appleRecheckAfter = .hours(20)
        appleBackfillPerNight = 1000
        googleSlices = 12
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = SyncConfig()
        googleOverlap =
            try container.decodeIfPresent(ConfigDuration.self, forKey: .googleOverlap)
            ?? defaults.googleOverlap
        googleSkew = try container.decodeIfPresent(ConfigDuration.self, forKey: .googleSkew) ?? defaults.googleSkew
        backfillShare = try container.decodeIfPresent(Double.self, forKey: .backfillShare) ?? defaults.backfillShare
        appleSandboxFallback =
            try container.decodeIfPresent(Bool.self, forKey: .appleSandboxFallback)
            ?? defaults.appleSandboxFallback
        appleOverlap =
            try container.decodeIfPresent(ConfigDuration.self, forKey: .appleOverlap) ?? defaults.appleOverlap
        appleSweepCustomers =
            try container.decodeIfPresent(Int.self, forKey: .appleSweepCustomers) ?? defaults.appleSweepCustomers
        appleConcurrency =
            try container.decodeIfPresent(Int.self, forKey: .appleConcurrency) ?? defaults.appleConcurrency
        googleSlices = try container.decodeIfPresent(Int.self, forKey: .googleSlices) ?? defaults.googleSlices
        appleRecheckAfter =
            try container.decodeIfPresent(ConfigDuration.self, forKey: .appleRecheckAfter)
            ?? defaults.appleRecheckAfter
        appleBackfillPerNight =
            try container.decodeIfPresent(Int.self, forKey: .appleBackfillPerNight) ?? defaults.appleBackfillPerNight
    }
}

/// `reports:`.
public struct ReportsConfig: Decodable, Sendable, Equatable {
    /// The IANA time zone that report dates are in (default UTC).
    public var timeZone: String

    enum CodingKeys: String, CodingKey, CaseIterable { case timeZone }

    /// The default.
    public init(timeZone: String = "UTC") { self.timeZone = timeZone }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC"
    }
}

/// `status:`.
public struct StatusConfig: Decodable, Sendable, Equatable {
    /// A checkpoint further behind than this needs attention (default 36 h).
    public var maxCheckpointAge: ConfigDuration

    enum CodingKeys: String, CodingKey, CaseIterable { case maxCheckpointAge }

    /// The default.
    public init(maxCheckpointAge: ConfigDuration = .hours(36)) { self.maxCheckpointAge = maxCheckpointAge }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        maxCheckpointAge =
            try container.decodeIfPresent(ConfigDuration.self, forKey: .maxCheckpointAge)
            ?? .hours(36)
    }
}

/// `nightly:`.
public struct NightlyConfig: Decodable, Sendable, Equatable {
    /// What a job does when another process holds its lock.
    public enum OnLocked: String, Decodable, Sendable, Equatable, CaseIterable {
        /// Skip the job with a clear line (default).
        case skip
        /// Wait for the lock.
        case wait
    }

    /// What a job does when another process holds its lock.
    public var onLocked: OnLocked
    /// The most database connections the apps' jobs hold at once (nil: sized at start from the server's free
    /// connections and the machine's cores, see ``NightlyFleet/defaultConcurrency(freeConnections:cores:)``).
    public var concurrency: Int?
    /// How long one app's night may take before its job in hand is stopped (progress saved, exit 75) and its
    /// remaining jobs are left for the next run (default 6h).
    public var appTimeout: ConfigDuration

    enum CodingKeys: String, CodingKey, CaseIterable { case onLocked, concurrency, appTimeout }

    /// The defaults.
    public init(onLocked: OnLocked = .skip, concurrency: Int? = nil, appTimeout: ConfigDuration = .hours(6)) {
        self.onLocked = onLocked
        self.concurrency = concurrency
        self.appTimeout = appTimeout
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        onLocked = try container.decodeIfPresent(OnLocked.self, forKey: .onLocked) ?? .skip
        concurrency = try container.decodeIfPresent(Int.self, forKey: .concurrency)
        if let concurrency, concurrency < 1 {
            throw DecodingError.dataCorruptedError(
                forKey: .concurrency, in: container,
                debugDescription: "expected a whole number of connections, 1 or more")
        }
        appTimeout = try container.decodeIfPresent(ConfigDuration.self, forKey: .appTimeout) ?? .hours(6)
        if appTimeout.seconds < 1 {
            throw DecodingError.dataCorruptedError(
                forKey: .appTimeout, in: container, debugDescription: "expected a duration of 1s or more")
        }
    }
}
