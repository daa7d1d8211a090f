"""What a person is told when their input is refused, in English and Chinese.

The memory library's messages ("content must not contain NUL characters or lone surrogates",
"3 tags; the maximum is 20") and the JSON parser's ("Expecting ',' delimiter: line 1 column 5
(char 4)") are written for programmers and are English; they go to the log. A person is told,
in their language, what is wrong with what they sent and what to do, chosen by the error's
``field`` and by what they sent (``bot.view.i18n.invalid_reason``, ``bot.chat.imports``).
Merged into ``bot.view.i18n.STRINGS``; the same rules hold (HTML templates, ``_plain`` keys
plain text).
"""

from __future__ import annotations

EN = {
    "problem_invisible": "the text has an invisible character in it that I can't store "
    "(it often comes along when text is copied). Retype that part and send it again.",
    "problem_broken": "the text has a broken character in it (half of an emoji or a "
    "symbol). Send it again without it.",
    "problem_empty": "there is no text in it to remember.",
    "problem_too_long": "that is {chars} characters, and one memory holds at most "
    "{max_chars}. Split it in two, or shorten it.",
    "problem_other": "something in it is not what I can store. Nothing was changed.",
    "invalid_tags": "a memory takes at most {max_tags} tags, each at most {max_label} "
    "characters, with no invisible characters.",
    "invalid_category": "a category is at most {max_label} characters, with no invisible "
    "characters.",
    "import_why_syntax_plain": "it stops making sense at line {line}",
    "import_why_encoding_plain": "it is not text",
    "import_why_nested_plain": "it is nested too deeply",
    "import_kind_object_plain": "one object",
    "import_kind_text_plain": "a piece of text",
    "import_kind_number_plain": "a number",
    "import_kind_constant_plain": "true, false or null",
    "import_kind_value_plain": "a single value",
    "import_entry_plain": "entry {entry}",
    "import_reason_invalid_content": "its text is empty, too long or has a character I can't store",
    "import_reason_invalid_tags": "its tags are not a list of short words",
    "import_reason_invalid_category": "its category is not a short word",
    "import_reason_invalid_other": "it has no id or no text, or a field that a memory file "
    "does not hold",
}

ZH = {
    "problem_invisible": "这段文字里有一个我无法保存的不可见字符（通常是复制文字时带进来的）。"
    "把那部分重新输入，再发一次。",
    "problem_broken": "这段文字里有一个残缺的字符（半个表情或符号）。去掉它再发一次。",
    "problem_empty": "里面没有可以记住的文字。",
    "problem_too_long": "这段有 {chars} 个字符，一条记忆最多 {max_chars} 个。"
    "请分成两条，或者删短一些。",
    "problem_other": "里面有我无法保存的内容，什么都没有改动。",
    "invalid_tags": "一条记忆最多 {max_tags} 个标签，每个最多 {max_label} 个字符，"
    "且不能有不可见字符。",
    "invalid_category": "分类最多 {max_label} 个字符，且不能有不可见字符。",
    "import_why_syntax_plain": "它在第 {line} 行出了错",
    "import_why_encoding_plain": "它不是文本文件",
    "import_why_nested_plain": "它的嵌套层数太多",
    "import_kind_object_plain": "一个对象",
    "import_kind_text_plain": "一段文字",
    "import_kind_number_plain": "一个数字",
    "import_kind_constant_plain": "一个布尔值或空值",
    "import_kind_value_plain": "一个单独的值",
    "import_entry_plain": "第 {entry} 项",
    "import_reason_invalid_content": "文字为空、太长，或者有我无法保存的字符",
    "import_reason_invalid_tags": "标签不是由简短词语组成的列表",
    "import_reason_invalid_category": "分类不是一个简短的词",
    "import_reason_invalid_other": "没有编号或文字，或者有记忆文件里不该有的字段",
}
