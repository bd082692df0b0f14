-- The metadata a run was started with (a JSON object; NULL for none),
-- which LangGraph clients find in the metadata of the run's checkpoints.
ALTER TABLE runs ADD COLUMN metadata text;
