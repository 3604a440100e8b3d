package s3obj_test

import (
	"slices"
	"testing"

	"github.com/sitemapgen/sitemapgen/pipeline/input/s3obj"
)

type R = s3obj.Range

func TestPlan(t *testing.T) {
	const M = 1 << 20
	tests := []struct {
		name string
		in   []R
		size int64
		gap  int64
		max  int64
		want []R
	}{
		{"empty", nil, 100, 10, 100, nil},
		{"one", []R{{10, 20}}, 100, 10, 100, []R{{10, 20}}},
		{"near ones merge, gap read", []R{{0, 10}, {15, 10}}, 100, 10, 100, []R{{0, 25}}},
		{"far ones apart", []R{{0, 10}, {30, 10}}, 100, 10, 100, []R{{0, 10}, {30, 10}}},
		{"unsorted and overlapping", []R{{50, 10}, {0, 10}, {5, 10}}, 100, 0, 100, []R{{0, 15}, {50, 10}}},
		{"touching merge without gap", []R{{0, 10}, {10, 10}}, 100, 0, 100, []R{{0, 20}}},
		{"clipped to the object", []R{{-5, 10}, {90, 50}, {200, 5}, {3, 0}}, 100, 0, 100, []R{{0, 5}, {90, 10}}},
		{"cut at max, near-equal pieces", []R{{0, 10}}, 100, 0, 4, []R{{0, 3}, {3, 3}, {6, 4}}},
		{"column chunks of a row group", []R{{4, 3 * M}, {3*M + 4 + 200*M, 2 * M}, {3*M + 4 + 2*M + 200*M + 100, M}}, 1 << 40, M, 8 * M,
			[]R{{4, 3 * M}, {3*M + 4 + 200*M, 3*M + 100}}},
	}
	for _, tt := range tests {
		got := s3obj.Plan(slices.Clone(tt.in), tt.size, tt.gap, tt.max)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Plan(%v) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}
