-- What a run's starter keeps with the run (a JSON value; NULL for none):
-- a LangGraph run's assistant, multitask strategy and kwargs, which its
-- Run object shows from any server sharing the store.
ALTER TABLE runs ADD COLUMN attrs text;
