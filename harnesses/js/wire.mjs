// DEF-2 on a wire form: the kit's one projection of a provider request's tool entry (the
// twin of conformance/seam/wire.py; SPEC DEF-2 "On a wire form"). Provider field names
// become the spec's (renames), the envelope (type: "function", a boolean strict) is
// dropped, every other key is kept so a leak shows, and values are the framework's own
// objects, never copies (a schemas action's write goes into what the framework sends next).

const ENVELOPE = {
  type: (value) => value === 'function',
  strict: (value) => typeof value === 'boolean',
}

export function modelEntry(entry, renames = {}) {
  const out = {}
  for (const [key, value] of Object.entries(entry)) {
    const test = ENVELOPE[key]
    if (test !== undefined && test(value)) continue
    if (value === undefined) continue // an absent field of a JS object literal
    out[renames[key] ?? key] = value
  }
  return out
}
