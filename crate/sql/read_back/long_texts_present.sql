-- Whether the .db has the whole texts of cells shown cut (2 = both tables; a .db written before them has neither).
SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('long_texts', 'long_text_uses')
