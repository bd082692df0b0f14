-- 0012: the request a run was started with (JSON; NULL when the server
-- that started it did not keep it), so that a live server can continue a
-- run whose server is gone from its last committed step.
ALTER TABLE runs ADD COLUMN request TEXT;
