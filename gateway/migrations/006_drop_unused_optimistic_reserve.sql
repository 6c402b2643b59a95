-- quarry_reserve_calls_optimistic (004) has had no caller since 005: quarry_charge_calls does
-- the same optimistic batch write with its calls grouped. Dropped rather than left for a reader
-- to wonder which of the two runs.
DROP FUNCTION IF EXISTS quarry_reserve_calls_optimistic(
  text[], text[], text[], text[], integer[], text[], text[], integer[], text[], text[], bigint[],
  bigint[], bigint[], boolean[], double precision[]
);
