-- Indexes of the small tables that the analyses look up by parent (built after the rows are in).
CREATE INDEX blocks_by_segment ON blocks(segment_id);
CREATE INDEX segments_by_device ON segments(device_id);
