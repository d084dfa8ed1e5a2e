-- One kept simulation.
INSERT INTO simulated_runs (device_id, conf, as_recorded, reproduces_recording, first_difference_event, first_difference,
  reserved_peak, reserved_peak_event, recorded_reserved_peak, allocated_peak, segment_allocs, segment_frees,
  free_at_reserved_peak, largest_free_at_reserved_peak, oom_event, capacity, settings_json)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
