package tokenizer_test

import (
	"fmt"

	"github.com/surgebench/surge/datasets/tokenizer"
)

func ExampleDefault() {
	tok, err := tokenizer.Default()
	if err != nil {
		panic(err)
	}
	ids := tok.Encode("Hello world!")
	fmt.Println(tok.Name(), ids, tok.Count("Hello world!"), tok.Decode(ids))
	// Output: qwen3 (embedded) [9707 1879 0] 3 Hello world!
}

func ExampleLoad() {
	tok, err := tokenizer.Load("testdata/llama3/tokenizer.json.gz")
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Name(), tok.Encode("1234567 don't"))
	// Output: llama3 [4513 10961 22 1541 956]
}
