-- One device's indexes (ordinal {index}), built after its rows are in.
CREATE INDEX out.trace_entry_{index}_allocated ON trace_entry_{index}(allocated);
CREATE INDEX out.trace_entry_{index}_active ON trace_entry_{index}(active);
CREATE INDEX out.trace_entry_{index}_reserved ON trace_entry_{index}(reserved);
CREATE INDEX out.block_{index}_alloc ON block_{index}(allocEventId);
CREATE INDEX out.block_{index}_free ON block_{index}(freeEventId);
CREATE INDEX out.block_{index}_size ON block_{index}(size);
