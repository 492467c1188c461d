#!/usr/bin/env python3
"""Write the sample PDF documents of the citebot example knowledge base.

No PDF library is needed: the PDF objects, the content streams and the
cross-reference table are written by hand. Text uses the standard Type1 fonts
Helvetica and Helvetica-Bold with WinAnsiEncoding, so any PDF reader (and
pypdf's text extraction) can read it without embedded fonts.

Run:  python examples/make_pdf.py      (writes into examples/kb/...)
"""
from __future__ import annotations

import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
KB = HERE / "kb"

PAGE_W, PAGE_H = 612, 792          # US Letter in points
MARGIN_X, TOP_Y, BOTTOM_Y = 72, 720, 72
STYLES = {                          # style: (font resource, size, leading, wrap width, space before)
    "title": ("F2", 18, 24, 50, 0),
    "h": ("F2", 13, 18, 70, 10),
    "p": ("F1", 10, 14, 92, 6),
    "li": ("F1", 10, 14, 90, 2),
}


def pdf_escape(text: str) -> str:
    text.encode("cp1252")  # fail loudly on characters WinAnsiEncoding lacks
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def layout(blocks):
    """Turn (style, text) blocks into pages of (font, size, x, y, text) lines."""
    pages, page, y = [], [], TOP_Y
    for style, text in blocks:
        if style == "pagebreak":
            pages.append(page)
            page, y = [], TOP_Y
            continue
        font, size, leading, width, before = STYLES[style]
        indent = 14 if style == "li" else 0
        lines = textwrap.wrap(text, width)
        if style == "li":
            lines = ["- " + lines[0]] + ["  " + ln for ln in lines[1:]]
        if page:
            y -= before
        for line in lines:
            if y < BOTTOM_Y:
                pages.append(page)
                page, y = [], TOP_Y
            page.append((font, size, MARGIN_X + indent, y, line))
            y -= leading
    if page:
        pages.append(page)
    return pages


def content_stream(lines, page_no, page_count, footer):
    ops = []
    for font, size, x, y, text in lines:
        ops.append(f"BT /{font} {size} Tf {x} {y} Td ({pdf_escape(text)}) Tj ET")
    if footer:
        ops.append(f"BT /F1 8 Tf {MARGIN_X} 40 Td ({pdf_escape(f'{footer} - page {page_no} of {page_count}')}) Tj ET")
    return "\n".join(ops).encode("cp1252")


def write_pdf(path: Path, blocks, title: str | None = None, footer: str | None = None):
    pages = layout(blocks)
    objects: list[bytes] = []  # object n is objects[n-1]

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")          # placeholder, filled in below
    pages_obj = add(b"")
    font1 = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    font2 = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    kids = []
    for i, lines in enumerate(pages, 1):
        data = content_stream(lines, i, len(pages), footer)
        stream = add(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
        page = add(
            (f"<< /Type /Page /Parent {pages_obj} 0 R /MediaBox [0 0 {PAGE_W} {PAGE_H}] "
             f"/Resources << /Font << /F1 {font1} 0 R /F2 {font2} 0 R >> >> "
             f"/Contents {stream} 0 R >>").encode()
        )
        kids.append(page)
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {pages_obj} 0 R >>".encode()
    objects[pages_obj - 1] = (
        f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>".encode()
    )
    info = None
    if title:
        info = add(f"<< /Title ({pdf_escape(title)}) /Producer (citebot examples/make_pdf.py) >>".encode("cp1252"))

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    trailer = f"<< /Size {len(objects) + 1} /Root {catalog} 0 R"
    if info:
        trailer += f" /Info {info} 0 R"
    trailer += " >>"
    out += b"trailer\n" + trailer.encode() + b"\nstartxref\n%d\n%%%%EOF\n" % xref_at
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    print(f"wrote {path.relative_to(HERE.parent)} ({len(pages)} page(s), {len(out)} bytes)")


WARRANTY = [
    ("title", "Northwind Outdoor Limited Warranty"),
    ("p", "Effective March 1, 2024. This limited warranty covers Northwind Outdoor tents, stoves, bikes, "
          "apparel and accessories bought new from Northwind Outdoor or from an authorized reseller in the "
          "United States or Canada."),
    ("h", "1. Warranty periods"),
    ("p", "The warranty period starts on the date of purchase shown on the receipt or the order confirmation."),
    ("li", "Tents are covered for 5 years from the date of purchase."),
    ("li", "Bike frames are covered for the lifetime of the original owner."),
    ("li", "Bike forks, wheels, brakes and other bike components are covered for 2 years."),
    ("li", "The Roadrunner D2 battery, motor and display are covered for 2 years or 500 charge cycles."),
    ("li", "Stoves are covered for 3 years from the date of purchase."),
    ("li", "Apparel and accessories are covered for 1 year from the date of purchase."),
    ("h", "2. What the warranty covers"),
    ("p", "The limited warranty covers defects in materials and workmanship that appear during normal use. "
          "A seam that was never taped, a pole that cracks under normal load or a stove valve that leaks "
          "from the factory are examples of defects covered by the warranty."),
    ("h", "3. What the warranty does not cover"),
    ("li", "Normal wear and tear, such as worn brake pads, tires, chains, tent stakes and stove O-rings."),
    ("li", "Damage caused by accidents, crashes, misuse, neglect or improper storage."),
    ("li", "Damage caused by using a stove inside a tent or a vestibule."),
    ("li", "Products that were modified, or repaired by anyone other than an authorized workshop."),
    ("li", "Products used in a commercial rental fleet are covered for 1 year only, for every product type."),
    ("pagebreak", ""),
    ("h", "4. How to make a warranty claim"),
    ("p", "To make a warranty claim, email warranty@northwindoutdoor.com with your order number and photos "
          "of the defect, or bring the product to any Northwind Outdoor store."),
    ("p", "Northwind Outdoor answers warranty claims within 5 business days."),
    ("p", "Northwind Outdoor pays the shipping costs for approved warranty claims in the United States and Canada."),
    ("p", "A warranty claim requires proof of purchase, such as a receipt, an order number or a reseller invoice."),
    ("h", "5. Repair, replacement or refund"),
    ("p", "An approved warranty claim is repaired, replaced with the same or an equivalent product, or "
          "refunded, at the choice of Northwind Outdoor. A repaired or replaced product is covered for the "
          "rest of the original warranty period or for 90 days, whichever is longer."),
    ("h", "6. Second owners"),
    ("p", "The lifetime bike frame warranty cannot be transferred to a second owner."),
    ("p", "All other warranty periods stay with the product when it is sold, as long as the second owner "
          "can show the original proof of purchase."),
    ("h", "7. Products bought outside the United States and Canada"),
    ("p", "Products bought in other countries are covered by the warranty terms of that country. Customers "
          "in mainland China should read the Chinese-language warranty page."),
    ("p", "This limited warranty gives you specific legal rights, and you may also have other rights that "
          "vary from state to state or province to province."),
]

QUICK_START = [
    ("title", "Roadrunner D2 quick start"),
    ("p", "Thank you for choosing the Roadrunner D2 e-bike. Read this quick start before your first ride, "
          "and keep it with the bike."),
    ("h", "Before the first ride"),
    ("li", "Charge the battery fully; the first charge takes about 4.5 hours."),
    ("li", "Tighten the handlebar stem bolts to 5 Nm and the pedals to 35 Nm."),
    ("li", "Inflate the tires to between 25 and 35 psi."),
    ("li", "Check that both brakes stop the wheels firmly before riding."),
    ("h", "Handlebar display"),
    ("p", "Hold the power button for 2 seconds to turn the Roadrunner D2 on or off."),
    ("p", "Press the plus and minus buttons to change the assist mode."),
    ("p", "Hold the minus button for 3 seconds to start walk assist."),
    ("h", "Assist modes"),
    ("li", "Eco mode adds 50% to your pedaling power and gives the longest range."),
    ("li", "Tour mode adds 120% to your pedaling power."),
    ("li", "Sport mode adds 200% to your pedaling power."),
    ("li", "Boost mode adds 300% to your pedaling power and gives the shortest range."),
    ("p", "The Roadrunner D2 motor stops assisting at 20 mph (32 km/h) in the United States."),
    ("p", "The Roadrunner D2 motor has a nominal power of 500 watts and a maximum torque of 85 Nm."),
    ("h", "Bolt torque values"),
    ("li", "Handlebar stem bolts: 5 Nm"),
    ("li", "Seatpost clamp: 6 Nm"),
    ("li", "Pedals: 35 Nm"),
    ("li", "Thru-axles: 15 Nm"),
    ("li", "Fork crown bolt: 12 Nm"),
    ("h", "Help"),
    ("p", "Register your Roadrunner D2 in the Northwind Trail app to receive firmware updates and recall notices."),
]

if __name__ == "__main__":
    write_pdf(KB / "policies" / "limited-warranty.pdf", WARRANTY,
              title="Northwind Outdoor Limited Warranty", footer="Northwind Outdoor Limited Warranty")
    # No /Title on purpose: the ingester must fall back to the file name.
    write_pdf(KB / "products" / "roadrunner-d2-quick-start.pdf", QUICK_START)
