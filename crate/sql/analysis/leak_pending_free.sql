-- Blocks of device row ?1 freed but pending (other streams) at the dump: count, bytes.
SELECT COUNT(*), SUM(size) FROM lifetimes WHERE device_id = ?1 AND ?2 >= 0 AND orphan = 0 AND state_at_dump = 'active_pending_free'
