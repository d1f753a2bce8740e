-- storerecon schema: refund pages keep room for each row's second version (issue 28's voided intake with amounts).
--
-- A Google refund row is written twice: the voided page inserts it, and the Orders API's answer, a moment later,
-- writes its amount (`GoogleOrderStore.savePartAmounts`). With full pages the second version went to another page,
-- so every index of `refund` took a new entry for it (four indexes); the amounts UPDATE cost about as much as the
-- page's insert. None of the columns it sets is indexed, so with room on the page the new version is a heap-only
-- tuple (HOT): no index entry, and the old version is pruned in place. 60 % leaves room for the second version of
-- most rows of a page (a Google row is about 600 bytes); `scripts/bench` reports the share of HOT updates.
-- Only pages written from now on keep the room; the table is not rewritten.
ALTER TABLE refund SET (fillfactor = 60);
