"""The tasks of the TabArena-v0.1 suite: OpenML task id -> the dataset name TabArena files them under.

TabArena 0.1.0 processes a run against its own bundled task table when every task id of the run
is in it (otherwise it asks OpenML for the missing ones), and then looks each task's results up
by dataset name: a result that names a known task id by another name stops its processing with a
``KeyError``. These are facts from that table (51 tasks), kept here so the native engine can refuse
such a result before it is published under a name no TabArena leaderboard knows.
"""

from __future__ import annotations

#: task id -> dataset name, as TabArena 0.1.0's bundled TabArena-v0.1 task metadata has them
TABARENA_V01 = {
    363612: "airfoil_self_noise", 363613: "Amazon_employee_access", 363614: "anneal",
    363615: "Another-Dataset-on-used-Fiat-500", 363616: "APSFailure", 363618: "bank-marketing",
    363619: "Bank_Customer_Churn", 363620: "Bioresponse", 363621: "blood-transfusion-service-center",
    363623: "churn", 363624: "coil2000_insurance_policies", 363625: "concrete_compressive_strength",
    363626: "credit-g", 363627: "credit_card_clients_default", 363628: "customer_satisfaction_in_airline",
    363629: "diabetes", 363630: "Diabetes130US", 363631: "diamonds", 363632: "E-CommereShippingData",
    363671: "Fitness_Club", 363672: "Food_Delivery_Time", 363673: "GiveMeSomeCredit",
    363674: "hazelnut-spread-contaminant-detection", 363675: "healthcare_insurance_expenses", 363676: "heloc",
    363677: "hiva_agnostic", 363678: "houses", 363679: "HR_Analytics_Job_Change_of_Data_Scientists",
    363681: "in_vehicle_coupon_recommendation", 363682: "Is-this-a-good-customer", 363683: "kddcup09_appetency",
    363684: "Marketing_Campaign", 363685: "maternal_health_risk", 363686: "miami_housing", 363689: "NATICUSdroid",
    363691: "online_shoppers_intention", 363693: "physiochemical_protein", 363694: "polish_companies_bankruptcy",
    363696: "qsar-biodeg", 363697: "QSAR-TID-11", 363698: "QSAR_fish_toxicity", 363699: "SDSS17",
    363700: "seismic-bumps", 363702: "splice", 363704: "students_dropout_and_academic_success",
    363705: "superconductivity", 363706: "taiwanese_bankruptcy_prediction", 363707: "website_phishing",
    363708: "wine_quality", 363711: "MIC", 363712: "jm1",
}


def values_sql() -> str:
    """The table as a DuckDB ``VALUES`` list of ``(tid, name)`` rows."""
    return ", ".join(f"({tid}, '{name}')" for tid, name in TABARENA_V01.items())
