package seqcheck

import "testing"

func TestTracker(t *testing.T) {
	for _, tc := range []struct {
		name           string
		seqs           []uint64
		produced, lost uint64
		wantErr        bool
	}{
		{"all delivered", []uint64{0, 1, 2, 3}, 4, 0, false},
		{"out of order", []uint64{3, 0, 2, 1}, 4, 0, false},
		{"lost counted", []uint64{0, 2}, 4, 2, false},
		{"lost not counted", []uint64{0, 2}, 4, 0, true},
		{"duplicate", []uint64{0, 1, 1}, 2, 0, true},
		{"large numbers", []uint64{1000, 64, 63}, 1001, 998, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr Tracker
			for _, s := range tc.seqs {
				tr.Add(s)
			}
			if err := tr.Check(tc.produced, tc.lost); (err != nil) != tc.wantErr {
				t.Errorf("Check(%d, %d) = %v, want error %v", tc.produced, tc.lost, err, tc.wantErr)
			}
		})
	}
}
