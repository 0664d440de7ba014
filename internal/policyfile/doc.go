// Package policyfile edits the fragments of a tailnet policy file that
// qtail owns and leaves every other byte as it was. It also reads what the
// rest of the file says (the tag owners of a tag, the grants and auto
// approvers of a route, the default allow-all rule), and checks the values
// that fragments hold (tags, CIDRs, selectors) as Tailscale does.
//
// A Document is one parsed file, changed by Mutations and written back with
// Bytes; it knows nothing of the API the file comes from, nor of batching
// (see the policy package, whose Store and Planner use it).
//
// # Fragments
//
// A fragment is one entry of the policy file, marked by a line comment on
// its own line just before it:
//
//	// qtail:grant:NAME                    an element of "grants"
//	// qtail:tag_owner:TAG                 a member "TAG": [owners] of "tagOwners"
//	// qtail:auto_approver:route:CIDR      a member "CIDR": [approvers] of "autoApprovers"."routes"
//	// qtail:auto_approver:exitNode        the member "exitNode": [approvers] of "autoApprovers"
//	// qtail:policy_test:NAME              an element of "tests"
//
// Sections are found case-insensitively ("Grants", "TagOwners", "ACLs"
// style files work) and appended to their parent object when missing. A
// grant or a test is identified by its marker only. A tag owner or an auto
// approver is identified by its key; it counts as qtail's when the marker
// that names that key stands before it.
//
// Reads compare fragments in canonical JSON (see Canonicalize). A put
// replaces the value of a marked entry in place; without a marker it
// adopts an identical entry by adding the marker, refuses a keyed entry
// with other content (*UnmanagedConflictError, which says how to import
// it), and otherwise appends a new entry at the end of the section.
//
// # Layout of what qtail writes
//
// Only the fragment qtail writes is laid out; the rest of the file is
// never reformatted.
//
//   - Indentation is copied from the last sibling entry. Where there is
//     none, the entry goes one level deeper than its container, with the
//     document's unit: a tab, or the number of spaces its lines use.
//   - A grant or a test is an object with one member per line, in the
//     order of the Tailscale documentation (src, dst, ip, app, via,
//     srcPosture; src, proto, srcPostureAttrs, accept, deny), each value
//     on one line when it fits in 100 bytes. Owners and approvers are a
//     one-line list under the same limit. The same value is always written
//     the same way.
//   - The container keeps its trailing-comma habit. New and empty
//     containers, and qtail's own objects, follow the document's majority
//     habit (trailing commas when undecided, as in Tailscale's default
//     file). CRLF files get CRLF.
//   - A comment on the same line as the entry before the new one stays on
//     that line.
//
// Deleting a fragment removes the entry, its marker and one separator;
// the comments around it stay. Appending then deleting gives back the
// original bytes when the section existed, with one exception: an empty
// section whose brackets stand on two lines with only indentation between
// them comes back as "[]" or "{}". A section that
// qtail created or emptied stays in place, empty: another run may still
// write to it, and an empty section is valid.
package policyfile
