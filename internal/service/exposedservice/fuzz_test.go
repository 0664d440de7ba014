package exposedservice

import "testing"

// FuzzImportID checks the parser of qtail_exposed_service's import ID: it
// never panics, and an ID it accepts is the id attribute that the resource
// formats for that service and annotations group (resourceID).
func FuzzImportID(f *testing.F) {
	for _, id := range []string{
		"3fa85f64-5717-4562-b3fc-2c963f66afa6/6b1d1b2e-4bcb-4a1d-9f3b-1b2c3d4e5f60",
		"container/3fa85f64-5717-4562-b3fc-2c963f66afa6/6b1d1b2e-4bcb-4a1d-9f3b-1b2c3d4e5f60",
		"container/a", "container/container/a", "container//a", "application/a/b", "a/b/c", "a", "", "/", "container/",
	} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		w, groupID, diags := parseImportID(id)
		if diags.HasError() {
			return
		}
		if w.id == "" || groupID == "" || (w.kind != kindApplication && w.kind != kindContainer) {
			t.Fatalf("%q gives %+v and group %q", id, w, groupID)
		}
		if got := resourceID(w, groupID); got != id {
			t.Fatalf("%q formats back as %q", id, got)
		}
	})
}
