package store

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemSize is an item's size as DynamoDB bills it (package doc, "Capacity"):
// the UTF-8 bytes of each attribute name plus its value.
func ItemSize(item Item) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is 1 byte per two significant digits, plus 1.
func numberSize(s string) int {
	s = strings.TrimLeft(strings.ToLower(s), "+-")
	s, _, _ = strings.Cut(s, "e")
	s = strings.Trim(strings.ReplaceAll(s, ".", ""), "0")
	if s == "" {
		s = "0"
	}
	return (len(s)+1)/2 + 1
}

// WriteUnits is what writing an item of size bytes costs on the table, and
// again on each index whose projection it changes (package doc, "Capacity"):
// one unit per started KB of the larger of the item before and after.
func WriteUnits(before, after int) int {
	return max(1, (max(before, after)+1023)/1024)
}

// ReadUnits is what reading size bytes costs: one unit per started 4 KB,
// half when eventually consistent.
func ReadUnits(size int, consistent bool) float64 {
	u := float64(max(1, (size+4095)/4096))
	if consistent {
		return u
	}
	return u / 2
}
