package policy

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/qtail/terraform-provider-qtail/internal/policyfile"
)

// The store applying N new grants, ten at a time as Terraform's
// parallelism sends them, against an in-memory API: the whole write path
// (batching, changes, rendering) without network. Its time per fragment
// grows with N only through the rendering of the whole file per write.
func BenchmarkStoreApplyInWaves(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint("N=", n), func(b *testing.B) {
			for b.Loop() {
				s := NewStore(newMemBackend("{}"), StoreOptions{})
				ctx := context.Background()
				for w := 0; w < n; w += 10 {
					var wg sync.WaitGroup
					for i := w; i < w+10 && i < n; i++ {
						key := policyfile.Key{Kind: policyfile.KindGrant, Name: fmt.Sprint("g", i)}
						s.Expect(key)
						wg.Go(func() {
							if err := s.Put(ctx, key, grantValue(fmt.Sprint("n", i))); err != nil {
								b.Error(err)
							}
						})
					}
					wg.Wait()
				}
			}
			perFragment(b, n)
		})
	}
}
