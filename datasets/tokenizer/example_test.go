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

// Load takes a tokenizer.json (plain or gzip-compressed) or the folder of a
// Hugging Face model that holds one. With Meta's Llama 3 tokenizer this
// prints "llama3 [4513 10961 22 1541 956]" (tested in TestReference).
func ExampleLoad() {
	tok, err := tokenizer.Load("models/llama3") // a folder holding tokenizer.json
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok.Name(), tok.Encode("1234567 don't"))
}
