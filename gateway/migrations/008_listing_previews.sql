-- An owner may turn the marketplace's free previews (try-tokens) of a listing off; on by default.
ALTER TABLE listings ADD COLUMN previews boolean NOT NULL DEFAULT true;
