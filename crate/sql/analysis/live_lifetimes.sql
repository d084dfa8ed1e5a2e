-- The lifetimes of device row {dev} live right after event {event} (allocated or pending free;
-- {event} = -1: the window start), as a subquery. Four plain conjunctions rather than one WHERE
-- with ORs: the virtual `lifetimes` table checks such terms itself while scanning and answers
-- the NULL tests from short lists (ORs would reach it as millions of column reads).
(SELECT * FROM lifetimes WHERE device_id = {dev} AND orphan = 0 AND alloc_event IS NULL AND free_completed_event IS NULL
 UNION ALL
 SELECT * FROM lifetimes WHERE device_id = {dev} AND orphan = 0 AND alloc_event IS NULL AND free_completed_event > {event}
 UNION ALL
 SELECT * FROM lifetimes WHERE device_id = {dev} AND orphan = 0 AND alloc_event <= {event} AND free_completed_event IS NULL
 UNION ALL
 SELECT * FROM lifetimes WHERE device_id = {dev} AND orphan = 0 AND alloc_event <= {event} AND free_completed_event > {event})
