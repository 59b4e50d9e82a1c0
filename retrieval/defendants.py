"""The defendants of a Chinese criminal judgment and their own paragraphs, where a judgment states who each
is: their birth, their prior convictions, and the custody of this case (被告人赵高银，男，…。曾因犯盗窃罪…被判处…。
因涉嫌犯…罪，于2017年6月20日被…刑事拘留，同年7月4日被逮捕。现羁押于…看守所。)."""

from __future__ import annotations

import re

from retrieval.hybrid import Passage

# 被告人赵高银， / 上诉人（原审被告人）黄某甲， / 被告人：毕某某。 / 被告人自报张鹏， (a name the defendant gave)
_PARTY_HEAD = re.compile(
    r"^(?:上诉人|被上诉人)?[（(]?(?:原审)?被告人[）)]?[:：]?(?:自报|自称)?([^\s，,。；;：:（）()]{1,12}?)[，,。（(]"
)
# a paragraph of another party, which ends the defendant's before it
_OTHER_PARTY = (
    "辩护人",
    "指定辩护人",
    "公诉机关",
    "原公诉机关",
    "抗诉机关",
    "法定代理人",
    "诉讼代理人",
    "委托",
    "诉讼代表人",
    "附带民事诉讼",
    "被害人",
    "被告单位",
    "上诉人（原审附带",
    "上诉人(原审附带",
)


def defendant_paragraphs(blocks: list[Passage]) -> list[tuple[str, Passage]]:
    """(defendant, block) of each PARTIES block of a defendant's paragraph: the block that opens with the
    defendant and those after it up to another party's."""
    out, owner = [], None
    for b in blocks:
        if b.block_type != "PARTIES":
            continue
        head = _PARTY_HEAD.match(b.text)
        if head:
            owner = head.group(1)
        elif b.text.startswith(_OTHER_PARTY):
            owner = None
        if owner is not None:
            out.append((owner, b))
    return out


def defendants(blocks: list[Passage]) -> list[str]:
    """The defendants' names, from their paragraphs, in the judgment's order."""
    return list(dict.fromkeys(name for name, _ in defendant_paragraphs(blocks)))
