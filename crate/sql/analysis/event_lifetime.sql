-- The lifetime ?1 an event belongs to, its fields in name order.
SELECT address, alloc_event, category, category_rule, free_completed_event, free_requested_event, id, origin,
requested_size, size, size_exact, size_uncertainty, stack_source, state_at_dump
FROM lifetimes WHERE id = ?1
