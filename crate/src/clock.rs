//! The one clock every target has (std's `Instant` panics on wasm32): deadlines of SQL statements
//! and the timings the engine reports.

/// Milliseconds from a monotonic-enough clock on every target (std's Instant panics on wasm32).
pub fn now_ms() -> f64 {
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    {
        js_sys::Date::now()
    }
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    {
        use std::time::{SystemTime, UNIX_EPOCH};
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64() * 1000.0).unwrap_or(0.0)
    }
}
