-- Which option(s) answered a structured question (issue 16): a reply text of
-- `2`, `2.` or an option's label records that option's label as the answer
-- and its 0-based index here (JSON array, several with multiSelect); the
-- default applied after the deadline records the default's index. NULL: a
-- free-text answer, or not answered.
ALTER TABLE ask_choices ADD COLUMN answered_options TEXT;
