-- The simulations a user chose to keep (`simulate --save`), one row per device and setting.
CREATE TABLE IF NOT EXISTS simulated_runs (
    id INTEGER PRIMARY KEY,
    device_id INTEGER NOT NULL,
    conf TEXT NOT NULL,
    as_recorded INTEGER NOT NULL,
    reproduces_recording INTEGER,
    first_difference_event INTEGER,
    first_difference TEXT,
    reserved_peak INTEGER NOT NULL,
    reserved_peak_event INTEGER,
    recorded_reserved_peak INTEGER NOT NULL,
    allocated_peak INTEGER NOT NULL,
    segment_allocs INTEGER NOT NULL,
    segment_frees INTEGER NOT NULL,
    free_at_reserved_peak INTEGER NOT NULL,
    largest_free_at_reserved_peak INTEGER NOT NULL,
    oom_event INTEGER,
    capacity INTEGER,
    settings_json TEXT NOT NULL
)
