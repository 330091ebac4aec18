-- 0014: a rule a client makes by answering "always" covers that client
-- only (issue 36). Before, a client's "always" was stored for every
-- client (client_id ''), and the table never said which client made it:
-- such rules are kept but turned off, with the reason, until the person
-- re-enables each for every client or deletes it.
ALTER TABLE approval_rules ADD COLUMN review TEXT NOT NULL DEFAULT ''; -- why it is off; '' while on
UPDATE approval_rules SET review = 'made by a client before rules were pinned: review'
	WHERE created_by = 'client' AND client_id = '';
