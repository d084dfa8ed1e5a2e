-- One stack as the Allocator state view's hover shows it: the naming frame, its caller, the text.
SELECT label, caller, text FROM call_stacks WHERE id = :id
